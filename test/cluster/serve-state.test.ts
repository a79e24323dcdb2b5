import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliToEnd, startCliServer } from "../support/cli.js";
import { REDIS_SERVER, type RedisServer, startRedisServer } from "../support/redis-server.js";
import { needsProgram } from "../support/system-program.js";

/**
 * `serve --state` as a user starts it: the start line names the store with its password hidden; a
 * store that cannot be read yet leaves the replica up and unhealthy until it can (or, with
 * --require-state, stops the start with one line saying why); never a password in any of it.
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

  it("with --require-state, refuses to start on a store that refuses it, quoting Redis without the password", async () => {
    const wrong = redis.url.replace(PASSWORD, "not-the-password-at-all");
    const run = await runCliToEnd(["serve", "--port", "0", "--state", wrong, "--require-state"]);
    expect(run.code).toBe(2);
    const shown = `redis://:***@127.0.0.1:${redis.port}/0`;
    expect(run.stderr).toBe(
      `merchant-sandbox: The state store ${shown} is unavailable: sync failed, not connected (the last connection error: Redis answered "WRONGPASS invalid username-password pair or user is disabled": the user name or password in the URL is not one Redis knows: check --state). Start Redis there or fix --state; without --require-state the replica would start unhealthy and wait for it.\n` +
        "Run 'merchant-sandbox serve --help' for the options.\n",
    );
    expect(run.stdout).toBe("");
  });

  it("starts before its Redis: unhealthy and 503 until Redis answers on its port, then serves by itself", async () => {
    const later = await startRedisServer();
    await later.kill();
    const cli = await startCliServer(["--state", later.url, "--log-format", "off"]);
    try {
      const health = await fetch(`${cli.url}/__sandbox/health`);
      expect(health.status).toBe(503);
      const body = (await health.json()) as { code: string; detail: string };
      expect(body.code).toBe("state_unavailable");
      expect(body.detail).toMatch(
        new RegExp(`^The shared state at redis://127\\.0\\.0\\.1:${later.port}/0 is not usable from this replica: .*ECONNREFUSED`),
      );
      const token = await fetch(`${cli.url}/api/v2/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),
      });
      expect([token.status, token.headers.get("retry-after")]).toEqual([503, "1"]);
      await later.restart();
      const bound = Date.now() + 15_000;
      while ((await fetch(`${cli.url}/__sandbox/health`)).status !== 200) {
        if (Date.now() > bound) throw new Error("the replica did not begin serving within 15 s of Redis starting");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const served = await fetch(`${cli.url}/api/v2/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),
      });
      expect(served.status).toBe(200);
      expect(
        cli
          .stderr()
          .split("\n")
          .filter((l) => l.startsWith("merchant-sandbox:")),
      ).toEqual([
        expect.stringMatching(
          new RegExp(
            `^merchant-sandbox: The state store redis://127\\.0\\.0\\.1:${later.port}/0 is unavailable: sync failed, not connected .* This replica answers 503 state_unavailable, health too, and serves once the shared state at redis://127\\.0\\.0\\.1:${later.port}/0 can be read\\.$`,
          ),
        ),
        `merchant-sandbox: The shared state at redis://127.0.0.1:${later.port}/0 can be read now: this replica serves.`,
      ]);
    } finally {
      cli.child.kill("SIGTERM");
      expect(await cli.exited).toBe(0);
      await later.stop();
    }
  }, 30_000);

  it("refuses a state that is not a Redis URL, with the form to write", async () => {
    const run = await runCliToEnd(["serve", "--port", "0", "--state", "http://127.0.0.1:6379"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("redis://");
    expect(run.stdout).toBe("");
  });
});
