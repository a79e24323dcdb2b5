import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, createSandbox, type Sandbox } from "../../src/index.js";
import { REDIS_SERVER, type RedisServer, startRedisServer } from "../support/redis-server.js";
import { needsProgram } from "../support/system-program.js";
import { call } from "../support/in-process.js";

/**
 * Replicas in this process on a real redis-server that dies and comes back empty (no persistence,
 * as the examples run it): the running replicas write the state they hold back into it (the
 * store's new epoch says it lost its data), and a replica started meanwhile, whose state is the
 * fresh one, gives way to theirs, so nothing comes back from before it was changed.
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

  async function replica(): Promise<Sandbox> {
    const s = await createSandbox({ state: redis.url, algorithm: "ES256", frozenAt: "2030-01-01T00:00:00Z" });
    opened.push(s);
    return s;
  }

  it("keeps what the running replicas hold, though a replica started after the restart wrote its fresh state first", async () => {
    const a = await replica();
    const session = (await call(a, "POST", "/__sandbox/sessions", {})).json;
    const { api_key, api_secret } = session.merchant;
    const token = await call(a, "POST", `/s/${session.id}/api/v2/auth/token`, { api_key, api_secret });
    const bearer = { authorization: `Bearer ${token.json.access_token}` };
    expect((await call(a, "POST", `/__sandbox/sessions/${session.id}/actions`, { now: { revoke_token: "all" } })).status).toBe(200);
    const rule = { next: { endpoint: "token", times: 1, then: { respond: { status: 503 } } } };
    expect((await call(a, "POST", "/__sandbox/sessions/" + session.id + "/actions", rule)).status).toBe(200);
    const fresh = (await call(a, "POST", "/api/v2/auth/token", CREDENTIALS)).json.access_token;
    const freshBearer = { authorization: `Bearer ${fresh}` };
    expect((await call(a, "POST", "/__sandbox/clock", { advance: "10m" })).status).toBe(200);
    const before = (await call(a, "GET", "/__sandbox/requests")).json.requests.map((e: { id: string }) => e.id);
    expect(before).toEqual(["req_1", "req_2"]);

    await redis.kill();
    await redis.restart();
    // A replica started now finds the store empty and seeds it with its own, fresh, state.
    const late = await replica();
    // The running replica notices the new epoch (its health runs a sync; a timer does too) and
    // writes back what it holds; the late replica then adopts it.
    const bound = Date.now() + 15_000;
    while ((await call(a, "GET", "/__sandbox/health")).status !== 200) {
      if (Date.now() > bound) throw new Error("the replica did not recover within 15 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const r of [a, late]) {
      expect((await call(r, "GET", `/__sandbox/sessions/${session.id}`)).status).toBe(200);
      const paid = await call(r, "GET", `/s/${session.id}/api/v2/payment/p_1`, undefined, bearer);
      expect([paid.status, paid.json.code]).toEqual([401, "token_revoked"]);
      expect((await call(r, "GET", "/__sandbox/clock")).json.now).toBe("2030-01-01T00:10:00.000Z");
      // The default scenario's start key is the running replica's: its earlier token still verifies.
      expect((await call(r, "GET", "/api/v2/payment/p_2", undefined, freshBearer)).status).toBe(200);
    }
    expect((await call(late, "GET", "/.well-known/jwks.json")).json).toEqual((await call(a, "GET", "/.well-known/jwks.json")).json);
    // The one-shot rule fires once, on whichever replica, and never again.
    const answers = [
      await call(late, "POST", `/s/${session.id}/api/v2/auth/token`, { api_key, api_secret }),
      await call(a, "POST", `/s/${session.id}/api/v2/auth/token`, { api_key, api_secret }),
    ];
    expect(answers.map((r) => [r.status, r.headers["x-sandbox-rule"]])).toEqual([
      [503, "default/action-1"],
      [200, undefined],
    ]);
    // Numbers go on after the journal's: no id is given twice.
    const journal = (await call(late, "GET", "/__sandbox/requests")).json.requests;
    expect((await call(a, "GET", "/__sandbox/requests")).json.requests).toEqual(journal);
    const ids = journal.map((e: { id: string }) => e.id);
    expect(ids.slice(0, 2)).toEqual(["req_1", "req_2"]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map((id: string) => Number(id.slice(4)))).toEqual([...ids.map((id: string) => Number(id.slice(4)))].sort((x, y) => x - y));
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
