import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, MemoryStore, type Sandbox, type StateStore } from "../../src/index.js";
import type { CommitRequest } from "../../src/core/state-store.js";
import { call } from "../support/in-process.js";

/**
 * What a replica sends its store is bounded before it is sent: a client without credentials
 * cannot grow the shared state past the journal's bounds, however long its paths.
 */

const opened: Sandbox[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

describe("journal records on their way to the store", () => {
  it("carry paths and queries cut to the journal's cap, so a flood of 15 KB paths stores at most journalSize small records", async () => {
    const inner = new MemoryStore({ journalSize: 20 });
    const sent: CommitRequest[] = [];
    const store: StateStore = {
      shownAs: "memory",
      sync: (cursor) => inner.sync(cursor),
      commit: (request) => {
        sent.push(request);
        return inner.commit(request);
      },
      settle: (id, waitMs) => inner.settle(id, waitMs),
      reseed: (state) => inner.reseed(state),
      feed: (after, limit, waitMs) => inner.feed(after, limit, waitMs),
      journal: () => inner.journal(),
      reap: (before, limit) => inner.reap(before, limit),
      close: async () => {},
    };
    const a = await createSandbox({ state: store, algorithm: "ES256", journalSize: 20 });
    opened.push(a);
    const long = `/api/v2/payment/${"p".repeat(15_000)}`;
    for (let i = 0; i < 40; i++) expect((await call(a, "GET", `${long}?q=${"v".repeat(15_000)}`)).status).toBe(401);
    const records = sent.flatMap((c) => (c.journal === undefined ? [] : [JSON.parse(c.journal) as { path: string; query: string }]));
    expect(records).toHaveLength(40);
    for (const record of records) {
      expect(record.path).toBe(`${long.slice(0, 1024)}…(${long.length - 1024} more chars)`);
      expect(record.query.length).toBeLessThanOrEqual(1024 + "…(99999 more chars)".length);
    }
    const kept = await inner.journal();
    expect(kept).toHaveLength(20);
    expect(kept.reduce((total, e) => total + e.json.length, 0)).toBeLessThan(20 * 3_000);
  });
});
