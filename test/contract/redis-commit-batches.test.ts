import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { StateStore } from "../../src/core/state-store.js";
import { openRedisStore } from "../../src/store/redis-store.js";
import { redisServerPerFile } from "../support/redis-server.js";
import { request } from "./state-store.contract.js";

/**
 * Commits made in one turn of the event loop go to Redis in one call (store/commit-batches.ts),
 * each still applied or refused on its own, in the order they were made.
 */

const server = redisServerPerFile();
const opened: Array<StateStore | Redis> = [];
afterEach(async () => {
  for (const s of opened.splice(0)) s instanceof Redis ? s.disconnect() : await s.close();
});

/** Scripts redis-server has run so far (INFO commandstats' evalsha calls). */
async function scriptCalls(admin: Redis): Promise<number> {
  const info = await admin.info("commandstats");
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe("RedisStore commit batches", () => {
  it("sends the commits of one turn in one call, and answers each as if it came alone", async () => {
    const store = await openRedisStore(server().url, { prefix: `t-${randomUUID()}:` });
    const admin = new Redis(server().url);
    opened.push(store, admin);
    const { epoch } = await store.sync("");
    // Once, so Redis holds the script (its first call goes as EVAL) and it is counted below.
    await store.commit(request({ epoch }));
    const before = await scriptCalls(admin);
    // The first write of part p applies; the second, read at the same version, is a conflict;
    // the journal entries are numbered in the order the commits were made.
    const results = await Promise.all([
      store.commit(request({ epoch, read: { p: 0 }, writes: [{ name: "p", json: "first" }], journal: "J1" })),
      store.commit(request({ epoch, read: { p: 0 }, writes: [{ name: "p", json: "second" }], journal: "J2" })),
      store.commit(request({ epoch, journal: "J3" })),
      store.commit(request({ epoch: "1", journal: "another epoch" })),
    ]);
    expect(await scriptCalls(admin)).toBe(before + 1);
    expect(results).toEqual([
      { ok: true, seq: 1, position: 1 },
      { ok: false, reason: "conflict" },
      { ok: true, seq: 2, position: 1 },
      { ok: false, reason: "conflict" },
    ]);
    expect((await store.sync("")).parts).toEqual([{ name: "p", version: 1, json: "first" }]);
    expect(await store.journal()).toEqual([
      { seq: 1, json: "J1" },
      { seq: 2, json: "J3" },
    ]);
  });

  it("answers every commit of a call the store refused with the same refusal", async () => {
    const store = await openRedisStore(server().url, { prefix: `t-${randomUUID()}:` });
    opened.push(store);
    const { epoch } = await store.sync("");
    await store.close();
    const results = await Promise.allSettled([store.commit(request({ epoch, journal: "A" })), store.commit(request({ epoch, journal: "B" }))]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    const [a, b] = results as [PromiseRejectedResult, PromiseRejectedResult];
    expect(a.reason).toBe(b.reason);
    expect((a.reason as Error).message).toContain("closed");
  });
});
