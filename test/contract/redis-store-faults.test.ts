import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { StateUnavailable } from "../../src/core/errors.js";
import type { StateStore } from "../../src/core/state-store.js";
import { LAYOUT_VERSION } from "../../src/store/redis-layout.js";
import { openRedisStore, StoreLayoutMismatch } from "../../src/store/redis-store.js";
import { freePort } from "../support/free-port.js";
import { type RedisServer, redisServerPerFile, startRedisServer } from "../support/redis-server.js";
import { inCurrentEpoch, request } from "./state-store.contract.js";

/**
 * What only the Redis store can meet: a store of another layout, a password, and Redis frozen
 * (SIGSTOP), killed and started again. Fault tests get a redis-server of their own.
 */

const shared = redisServerPerFile();
/** Small, so the refusals come fast; the bounds below follow from it. */
const TIMEOUT_MS = 300;
/** How much later than its timeout a refusal may come, on a busy machine: a bound, not a figure measured. */
const SLACK_MS = 1500;
/** How long recovery may take after Redis is back: the reconnection's longest pause and more. */
const RECOVERY_MS = 5000;
const PASSWORD = "hunter2-Secret";

const servers: RedisServer[] = [];
const stores: StateStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function ownServer(options?: { password?: string }): Promise<RedisServer> {
  const server = await startRedisServer(options);
  servers.push(server);
  return server;
}

async function open(url: string, options: Parameters<typeof openRedisStore>[1] = {}) {
  const store = await openRedisStore(url, { prefix: `t-${randomUUID()}:`, ...options });
  stores.push(store);
  return inCurrentEpoch(store);
}

/** How long a promise takes to reject, and with what. */
async function rejection(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error("expected a rejection, and the call resolved");
}

/** Polls with a sync until the store answers, within a bound. */
async function recovered(store: StateStore, boundMs = RECOVERY_MS): Promise<void> {
  const until = performance.now() + boundMs;
  for (;;) {
    try {
      await store.sync("");
      return;
    } catch (error) {
      if (performance.now() > until) throw new Error(`the store did not recover within ${boundMs} ms: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function unavailable(shownAs: string, op: string, why: string): string {
  return `The state store ${shownAs} is unavailable: ${op} failed, ${why}. The replica reconnects by itself; requests that need the shared state are refused until then.`;
}

describe("the Redis store's layout version", () => {
  it("refuses to open a store written in another layout, saying what to do, and refuses calls on one that changed under it", async () => {
    const prefix = `t-${randomUUID()}:`;
    const store = await open(shared().url, { prefix });
    expect(await store.commit(request({ journal: "J" }))).toEqual({ ok: true, seq: 1, position: expect.any(Number) });
    const raw = new Redis(shared().port, "127.0.0.1");
    try {
      expect(await raw.get(`${prefix}{sb}:layout`)).toBe(LAYOUT_VERSION);
      await raw.set(`${prefix}{sb}:layout`, "7");
      const message =
        `The state store ${shared().url} holds state in layout version 7 (key ${prefix}{sb}:layout), and this version of merchant-sandbox ` +
        `reads and writes layout version ${LAYOUT_VERSION}. Replicas` +
        " of different layouts cannot share a store: run one version against it, or give this one " +
        "a store of its own (another database, redis://HOST:PORT/DB, or another key prefix), or, if the stored state may be lost, delete its " +
        `keys (${prefix}{sb}:*) and start again.`;
      const refused = openRedisStore(shared().url, { prefix });
      await expect(refused).rejects.toThrow(StoreLayoutMismatch);
      await expect(refused).rejects.toThrow(message);
      const { error } = await rejection(store.commit(request({ journal: "J2" })));
      expect(error).toBeInstanceOf(StateUnavailable);
      expect((error as StateUnavailable).message).toBe(message);
      await raw.set(`${prefix}{sb}:layout`, LAYOUT_VERSION);
      expect(await store.commit(request({ journal: "J2" }))).toEqual({ ok: true, seq: 2, position: expect.any(Number) });
    } finally {
      raw.disconnect();
    }
  });
});

describe("the Redis store with a password", () => {
  it("connects with it, shows it as ***, and never quotes it, nor a wrong one, in a refusal", async () => {
    const server = await ownServer({ password: PASSWORD });
    expect(server.url).toBe(`redis://:${PASSWORD}@127.0.0.1:${server.port}/0`);
    const store = await open(server.url, { commandTimeoutMs: TIMEOUT_MS });
    expect(store.shownAs).toBe(`redis://:***@127.0.0.1:${server.port}/0`);
    expect(await store.commit(request({ journal: "J" }))).toEqual({ ok: true, seq: 1, position: expect.any(Number) });
    const wrong = await rejection(open(`redis://:wrong-${PASSWORD}@127.0.0.1:${server.port}/0`, { commandTimeoutMs: TIMEOUT_MS }));
    expect(wrong.error).toBeInstanceOf(StateUnavailable);
    expect((wrong.error as Error).message).toBe(
      unavailable(
        store.shownAs,
        "connect",
        'not connected (the last connection error: Redis answered "WRONGPASS invalid username-password pair or user is disabled": the user name or password in the URL is not one Redis knows: check --state)',
      ),
    );
    expect((wrong.error as Error).message).not.toContain(PASSWORD);
    const none = await rejection(open(`redis://127.0.0.1:${server.port}/0`, { commandTimeoutMs: TIMEOUT_MS }));
    expect((none.error as Error).message).toBe(
      unavailable(
        `redis://127.0.0.1:${server.port}/0`,
        "connect",
        'not connected (the last connection error: Redis answered "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time": Redis asks for a password: give it in the URL (redis://:PASSWORD@HOST:PORT, or redis://USER:PASSWORD@… for an ACL user))',
      ),
    );
    server.freeze();
    const frozen = await rejection(store.sync(""));
    expect((frozen.error as Error).message).toBe(unavailable(store.shownAs, "sync", `no answer within ${TIMEOUT_MS} ms`));
    server.thaw();
  });
});

describe("the Redis store while Redis is frozen (SIGSTOP)", () => {
  it("refuses every call as unavailable within its timeout, applies none of the writes later, and works again after SIGCONT", async () => {
    const server = await ownServer();
    const store = await open(server.url, { commandTimeoutMs: TIMEOUT_MS });
    expect(await store.commit(request({ read: { sandbox: 0 }, writes: [{ name: "sandbox", json: "S1" }], journal: "J1" }))).toEqual({
      ok: true,
      seq: 1,
      position: expect.any(Number),
    });
    const { epoch } = await store.sync("");
    server.freeze();
    const frozenCommit = request({
      epoch,
      read: { sandbox: 1 },
      writes: [{ name: "sandbox", json: "frozen" }],
      journal: "frozen",
      deadlineMs: Date.now() + TIMEOUT_MS,
    });
    const commit = await rejection(store.commit(frozenCommit));
    expect(commit.error).toBeInstanceOf(StateUnavailable);
    expect((commit.error as Error).message).toBe(unavailable(server.url, "commit", `no answer within ${TIMEOUT_MS} ms`));
    expect(commit.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    const others = await Promise.all([
      rejection(store.sync("")),
      rejection(store.settle("frozen", TIMEOUT_MS)),
      rejection(store.journal()),
      rejection(store.reap(0, 1)),
      rejection(store.feed("", 10)),
    ]);
    for (const { error, ms } of others) {
      expect(error).toBeInstanceOf(StateUnavailable);
      expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    }
    const waiting = await rejection(store.feed("", 10, 200));
    expect((waiting.error as Error).message).toBe(unavailable(server.url, "feed", `no answer within ${200 + TIMEOUT_MS} ms`));
    expect(waiting.ms).toBeLessThan(200 + TIMEOUT_MS + SLACK_MS);
    server.thaw();
    await recovered(store);
    // Redis ran the frozen commit once thawed, past its deadline: refused, and settled as not applied.
    expect(await store.settle(frozenCommit.id, TIMEOUT_MS)).toEqual({ applied: false });
    expect(await store.commit(request({ read: { sandbox: 1 }, writes: [{ name: "sandbox", json: "S2" }], journal: "J2" }))).toEqual({
      ok: true,
      seq: 2,
      position: expect.any(Number),
    });
    expect(await store.journal()).toEqual([
      { seq: 1, json: "J1" },
      { seq: 2, json: "J2" },
    ]);
    expect((await store.sync("")).parts).toEqual([{ name: "sandbox", version: 2, json: "S2" }]);
    expect((await store.feed("", 10, 1000)).map((e) => e.json)).toEqual(["J1", "J2"]);
  });
});

describe("the Redis store while Redis is down (SIGKILL) and after a new one starts on its port", () => {
  it("refuses at once, fails a waiting feed read, and recovers by itself, resyncing in full the emptied store", async () => {
    const server = await ownServer();
    const store = await open(server.url, { commandTimeoutMs: TIMEOUT_MS });
    await store.commit(request({ read: { sandbox: 0 }, writes: [{ name: "sandbox", json: "S1" }], journal: "J1" }));
    const cursor = (await store.sync("")).cursor;
    const [last] = await store.feed("", 10);
    const waiting = rejection(store.feed(last!.id, 10, 10_000));
    const { epoch } = await store.sync("");
    await server.kill();
    const commit = await rejection(store.commit(request({ epoch, journal: "J2" })));
    expect(commit.error).toBeInstanceOf(StateUnavailable);
    expect((commit.error as Error).message).toMatch(
      new RegExp(
        `^The state store redis://127\\.0\\.0\\.1:${server.port}/0 is unavailable: commit failed, not connected( \\(the last connection error: [^)]+\\))?\\. `,
      ),
    );
    expect(commit.ms).toBeLessThan(SLACK_MS);
    const fed = await waiting;
    expect(fed.error).toBeInstanceOf(StateUnavailable);
    expect(fed.ms).toBeLessThan(10_000);
    await server.restart();
    await recovered(store);
    const emptied = await store.sync(cursor);
    expect(emptied).toEqual({
      cursor: expect.any(String),
      epoch: expect.any(String),
      lineage: undefined,
      ancestry: [],
      position: 0,
      full: true,
      parts: [],
      removed: [],
      records: [],
      keys: [],
    });
    expect(emptied.epoch).not.toBe(epoch);
    expect(await store.commit(request({ read: { sandbox: 0 }, writes: [{ name: "sandbox", json: "S1 again" }], journal: "J1 again" }))).toEqual({
      ok: true,
      seq: 1,
      position: expect.any(Number),
    });
  });

  it("refuses to open when nothing answers at the address, within its bound, saying so", async () => {
    const port = await freePort();
    const { error, ms } = await rejection(open(`redis://127.0.0.1:${port}/0`, { commandTimeoutMs: TIMEOUT_MS }));
    expect(error).toBeInstanceOf(StateUnavailable);
    expect((error as Error).message).toBe(
      unavailable(`redis://127.0.0.1:${port}/0`, "connect", `not connected (the last connection error: connect ECONNREFUSED 127.0.0.1:${port})`),
    );
    expect(ms).toBeLessThan(SLACK_MS);
  });
});
