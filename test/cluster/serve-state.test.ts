import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliToEnd, startCliServer } from "../support/cli.js";
import { REDIS_SERVER, type RedisServer, startRedisServer } from "../support/redis-server.js";
import { needsProgram } from "../support/system-program.js";

/**
 * `serve --state` as a user starts it: the start line names the store with its password hidden,
 * and a store that cannot be used stops the start with one line saying why (no password in it).
 */

const PASSWORD = "state-store-password-9f3k";

describe("serve --state", () => {
  const haveRedis = needsProgram(REDIS_SERVER);
  let redis: RedisServer;

  beforeAll(async () => {
    if (haveRedis) redis = await startRedisServer({ password: PASSWORD });
  }, 30_000);

  afterAll(async () => {
    await redis?.stop();
  });

  it("names the store in its start line, the password as ***", async () => {
    const cli = await startCliServer(["--state", redis.url]);
    try {
      const line = cli
        .stdout()
        .split("\n")
        .find((l) => l.includes("listening on"))!;
      expect(line).toContain(` state=redis://:***@127.0.0.1:${redis.port}/0`);
      expect(cli.stdout() + cli.stderr()).not.toContain(PASSWORD);
      const health = await fetch(`${cli.url}/__sandbox/health`);
      expect(health.status).toBe(200);
    } finally {
      cli.child.kill("SIGTERM");
      expect(await cli.exited).toBe(0);
    }
  });

  it("refuses to start on a store it cannot reach, saying so without the password", async () => {
    const wrong = redis.url.replace(PASSWORD, "not-the-password-at-all");
    const run = await runCliToEnd(["serve", "--port", "0", "--state", wrong]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^merchant-sandbox: .*redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0/m);
    expect(run.stderr).not.toContain("not-the-password-at-all");
    expect(run.stdout).toBe("");
  });

  it("refuses a state that is not a Redis URL, with the form to write", async () => {
    const run = await runCliToEnd(["serve", "--port", "0", "--state", "http://127.0.0.1:6379"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("redis://");
    expect(run.stdout).toBe("");
  });
});
