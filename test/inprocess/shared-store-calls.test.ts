import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox, type StateStore } from "../../src/index.js";
import { call } from "../support/in-process.js";
import { over } from "../support/state-stores.js";

/**
 * The store calls a request costs, as docs/deployment.md ("How a request runs") and
 * core/state-store.ts state them: one commit for a request of the merchant API once the replica
 * is in step (its commit checks what the answer was made from, and brings back what changed);
 * a second run and commit when another replica changed what it read; a sync, a read of the feed
 * and a commit for a control-plane write, a sync and a feed read for a control-plane read; settle
 * only after a commit's answer was lost. Counted on a replica whose feed follower and timer are quiet.
 */

const opened: Sandbox[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

type Op = "sync" | "commit" | "settle" | "reseed" | "feed" | "journal" | "reap";

function counting(inner = new MemoryStore()) {
  const counts = new Map<Op, number>();
  const count = (op: Op) => counts.set(op, (counts.get(op) ?? 0) + 1);
  const counted =
    <A extends unknown[], R>(op: Op, fn: (...args: A) => R) =>
    (...args: A): R => {
      count(op);
      return fn(...args);
    };
  const store = over(inner, {
    sync: counted("sync", (cursor: string) => inner.sync(cursor)),
    commit: counted("commit", (request: Parameters<StateStore["commit"]>[0]) => inner.commit(request)),
    settle: counted("settle", (id: string, waitMs: number) => inner.settle(id, waitMs)),
    reseed: counted("reseed", (state: Parameters<StateStore["reseed"]>[0]) => inner.reseed(state)),
    // The follower's waiting reads are its own, not a request's: only reads that do not wait count.
    feed: (after, limit, waitMs) => (waitMs ? inner.feed(after, limit, waitMs) : counted("feed", () => inner.feed(after, limit))()),
    journal: counted("journal", () => inner.journal()),
    reap: counted("reap", (before: number, limit: number) => inner.reap(before, limit)),
  });
  return {
    store,
    /** The calls `work` made, by operation. */
    async during(work: () => Promise<unknown>): Promise<Partial<Record<Op, number>>> {
      return (await this.made(work)).calls;
    },
    /** What `work` answered, and the calls it made by operation. */
    async made<T>(work: () => Promise<T>): Promise<{ result: T; calls: Partial<Record<Op, number>> }> {
      counts.clear();
      const result = await work();
      return { result, calls: Object.fromEntries(counts) };
    },
  };
}

const CREDENTIALS = { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" };

/** A replica on `store` whose timer never syncs on its own while a test counts. */
async function replica(store: StateStore): Promise<Sandbox> {
  const sandbox = await createSandbox({ state: store, algorithm: "ES256", stateTimings: { tickMs: 60_000, noticeMs: 100 } });
  opened.push(sandbox);
  return sandbox;
}

describe("store calls per request", () => {
  it("one commit per merchant request in step; a sync, a feed read and a commit per control-plane write; a sync and a feed read per read", async () => {
    const store = counting();
    const a = await replica(store.store);
    const token = (await call(a, "POST", "/api/v2/auth/token", CREDENTIALS)).json.access_token;
    const bearer = { authorization: `Bearer ${token}` };
    expect(await store.during(() => call(a, "POST", "/api/v2/auth/token", CREDENTIALS))).toEqual({ commit: 1 });
    expect(await store.during(() => call(a, "GET", "/api/v2/payment/p_1", undefined, bearer))).toEqual({ commit: 1 });
    expect(await store.during(() => call(a, "GET", "/api/v2/nowhere"))).toEqual({ commit: 1 });
    expect(await store.during(() => call(a, "POST", "/__sandbox/clock", { advance: "1m" }))).toEqual({ sync: 1, commit: 1, feed: 1 });
    expect(await store.during(() => call(a, "GET", "/__sandbox/requests"))).toEqual({ sync: 1, feed: 1 });
    expect(await store.during(() => call(a, "GET", "/__sandbox/health"))).toEqual({ sync: 1 });
    const together = await store.during(() =>
      Promise.all(Array.from({ length: 10 }, (_, i) => call(a, "GET", `/api/v2/payment/p_${i}`, undefined, bearer))),
    );
    expect(together).toEqual({ commit: 10 });
  });

  it("runs a request again, with no sync, when another replica changed what it read; not for another session's change", async () => {
    const shared = new MemoryStore();
    const store = counting(shared);
    const a = await replica(store.store);
    const b = await replica(shared);
    const mine = await session(a);
    const other = await session(b);
    const payment = `/s/${mine.id}/api/v2/payment/p_1`;
    expect((await call(a, "GET", payment, undefined, mine.bearer)).status).toBe(200);
    // Another session's change is none of this request's business: one commit.
    expect((await call(b, "POST", `/__sandbox/sessions/${other.id}/clock`, { advance: "1m" })).status).toBe(200);
    expect(await store.during(() => call(a, "GET", payment, undefined, mine.bearer))).toEqual({ commit: 1 });
    // Its own session's clock moved past the token's exp on b: news to it.
    expect((await call(b, "POST", `/__sandbox/sessions/${mine.id}/clock`, { advance: "2h" })).status).toBe(200);
    const expired = await store.made(() => call(a, "GET", payment, undefined, mine.bearer));
    expect([expired.calls, expired.result.status, expired.result.json.code]).toEqual([{ commit: 2 }, 401, "token_expired"]);
    Object.assign(mine, await session(a, mine.id));
    // Its own session's tokens revoked on b: a's first run answered 200 from what it held; that
    // commit is refused as stale, with the revocation, and the run again answers as the store says.
    expect((await call(b, "POST", `/__sandbox/sessions/${mine.id}/actions`, { now: { revoke_token: "all" } })).status).toBe(200);
    const refused = await store.made(() => call(a, "GET", payment, undefined, mine.bearer));
    expect([refused.calls, refused.result.status, refused.result.json.code]).toEqual([{ commit: 2 }, 401, "token_revoked"]);
  });
});

/** A new session on `s` and a token of it; with `id`, a new token of that session. */
async function session(s: Sandbox, id?: string) {
  const made = id === undefined ? (await call(s, "POST", "/__sandbox/sessions", {})).json : (await call(s, "GET", `/__sandbox/sessions/${id}`)).json;
  const token = await call(s, "POST", `/s/${made.id}/api/v2/auth/token`, { api_key: made.merchant.api_key, api_secret: made.merchant.api_secret });
  return { id: made.id as string, bearer: { authorization: `Bearer ${token.json.access_token}` } };
}
