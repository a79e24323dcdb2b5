import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox, type StateStore } from "../../src/index.js";
import { call } from "../support/in-process.js";
import { over } from "../support/state-stores.js";

/**
 * The store calls a request costs, as docs/deployment.md ("How a request runs") and
 * core/state-store.ts state them: one sync and one commit for a request of the merchant API or a
 * control-plane write, one sync and a read of the feed for a control-plane read; settle only after
 * a commit's answer was lost. Counted on a replica whose feed follower and timer are quiet.
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
      counts.clear();
      await work();
      return Object.fromEntries(counts);
    },
  };
}

describe("store calls per request", () => {
  it("one sync and one commit per merchant request and control-plane write; a sync and a feed read per control-plane read", async () => {
    const store = counting();
    // A long tick: no timer's sync is counted with a request's.
    const a = await createSandbox({ state: store.store, algorithm: "ES256", stateTimings: { tickMs: 60_000, noticeMs: 100 } });
    opened.push(a);
    const credentials = { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" };
    const token = (await call(a, "POST", "/api/v2/auth/token", credentials)).json.access_token;
    const bearer = { authorization: `Bearer ${token}` };
    expect(await store.during(() => call(a, "POST", "/api/v2/auth/token", credentials))).toEqual({ sync: 1, commit: 1 });
    expect(await store.during(() => call(a, "GET", "/api/v2/payment/p_1", undefined, bearer))).toEqual({ sync: 1, commit: 1 });
    expect(await store.during(() => call(a, "GET", "/api/v2/nowhere"))).toEqual({ sync: 1, commit: 1 });
    expect(await store.during(() => call(a, "POST", "/__sandbox/clock", { advance: "1m" }))).toEqual({ sync: 1, commit: 1, feed: 1 });
    expect(await store.during(() => call(a, "GET", "/__sandbox/requests"))).toEqual({ sync: 1, feed: 1 });
    expect(await store.during(() => call(a, "GET", "/__sandbox/health"))).toEqual({ sync: 1 });
    // Requests that arrive together share a sync.
    const together = await store.during(() =>
      Promise.all(Array.from({ length: 10 }, (_, i) => call(a, "GET", `/api/v2/payment/p_${i}`, undefined, bearer))),
    );
    expect(together.commit).toBe(10);
    expect(together.sync).toBeLessThanOrEqual(2);
  });
});
