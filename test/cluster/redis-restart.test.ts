import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, createSandbox, type Sandbox } from "../../src/index.js";
import { REDIS_SERVER, type RedisServer, startRedisServer } from "../support/redis-server.js";
import { needsProgram } from "../support/system-program.js";
import { call } from "../support/in-process.js";

/**
 * Replicas in this process on a real redis-server that dies and comes back empty (no persistence,
 * as the examples run it): the running replica notices at its next sync, starts its journal again
 * and stores the sandbox's own state again, so a replica started afterwards signs with its key.
 */

const CREDENTIALS = { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" };

describe("a redis-server restarted without its data", () => {
  const haveRedis = needsProgram(REDIS_SERVER);
  let redis: RedisServer;
  const opened: Sandbox[] = [];

  beforeAll(async () => {
    if (haveRedis) redis = await startRedisServer();
  }, 30_000);

  // close() lets the store's connections go without waiting for their sockets: each test waits
  // (bounded) until they are released, so a test counting sockets never counts another's.
  let socketsBefore = 0;
  beforeEach(() => {
    socketsBefore = sockets();
  });

  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    await socketsBackTo(socketsBefore);
  });

  afterAll(async () => {
    await redis?.stop();
  });

  it("a running replica starts its journal again and stores its state again; a new replica then starts on its key", async () => {
    const a = await createSandbox({ state: redis.url, algorithm: "ES256" });
    opened.push(a);
    const session = (await call(a, "POST", "/__sandbox/sessions", {})).json;
    expect((await call(a, "POST", "/api/v2/auth/token", CREDENTIALS)).status).toBe(200);
    expect((await call(a, "GET", "/__sandbox/requests")).json.requests).toHaveLength(1);

    await redis.kill();
    await redis.restart();
    // Bounded: the replica reconnects by itself, and its health runs a sync.
    const bound = Date.now() + 15_000;
    while ((await call(a, "GET", "/__sandbox/health")).status !== 200) {
      if (Date.now() > bound) throw new Error("the replica did not recover within 15 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    expect((await call(a, "GET", `/__sandbox/sessions/${session.id}`)).status).toBe(404);
    expect((await call(a, "POST", "/api/v2/auth/token", CREDENTIALS)).status).toBe(200);
    const journal = (await call(a, "GET", "/__sandbox/requests")).json.requests;
    expect(journal.map((e: { id: string; path: string }) => `${e.id} ${e.path}`)).toEqual(["req_1 /api/v2/auth/token"]);

    const b = await createSandbox({ state: redis.url, algorithm: "ES256" });
    opened.push(b);
    expect((await call(b, "GET", "/.well-known/jwks.json")).json).toEqual((await call(a, "GET", "/.well-known/jwks.json")).json);
    // Both replicas list one journal: the exchange and the two JWKS reads just made.
    const onB = (await call(b, "GET", "/__sandbox/requests")).json.requests;
    expect(onB.map((e: { id: string; path: string }) => `${e.id} ${e.path}`)).toEqual([
      "req_1 /api/v2/auth/token",
      "req_2 /.well-known/jwks.json",
      "req_3 /.well-known/jwks.json",
    ]);
    expect((await call(a, "GET", "/__sandbox/requests")).json.requests).toEqual(onB);
  }, 60_000);

  it("a start that fails after the store is open leaves no connection behind", async () => {
    const before = sockets();
    await expect(createSandbox({ state: redis.url, maxEventSubscribers: 0 })).rejects.toBeInstanceOf(ConfigError);
    await socketsBackTo(before);
    expect(sockets()).toBe(before);
  });
});

/** The TCP sockets this process holds now. */
function sockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;
}

/** Closed sockets leave the list once their handles are released: a bounded wait, not a sleep. */
async function socketsBackTo(count: number): Promise<void> {
  const bound = Date.now() + 5_000;
  while (sockets() > count && Date.now() < bound) await new Promise((resolve) => setTimeout(resolve, 20));
}
