import { describe, expect, it } from "vitest";
import { commitKnown, isUnknownOutcome } from "../../src/app/shared/commit-outcome.js";
import { StateUnavailable } from "../../src/core/errors.js";
import type { CommitRequest } from "../../src/core/state-store.js";
import { MemoryStore } from "../../src/index.js";
import { over } from "../support/state-stores.js";

/**
 * A commit's outcome as the replica learns it: the store's answer, or, when that was lost, what
 * settle finds; a 503 that says "not known" only when the store answers neither within the window.
 */

const UNKNOWN =
  "The sandbox's shared state stopped answering while this request's changes were being stored, and whether they were is not known. Read the state (the journal, the session) before you retry.";

async function request(store: MemoryStore): Promise<CommitRequest> {
  const { epoch } = await store.sync("");
  return {
    id: `t:${Math.random().toString(36).slice(2)}`,
    epoch,
    read: {},
    writes: [],
    records: [],
    keys: [],
    events: [],
    journal: "J",
    deadlineMs: Date.now() + 60_000,
  };
}

describe("commitKnown", () => {
  it("gives the store's answer when it comes", async () => {
    const inner = new MemoryStore();
    expect(await commitKnown(inner, await request(inner))).toEqual({ ok: true, seq: 1, position: 0 });
  });

  it("settles a commit whose answer was lost after it applied: applied, with its number", async () => {
    const inner = new MemoryStore();
    const store = over(inner, {
      commit: async (r) => {
        await inner.commit(r);
        throw new StateUnavailable("no answer within 2000 ms");
      },
    });
    expect(await commitKnown(store, await request(inner))).toEqual({ ok: true, seq: 1, position: 0 });
  });

  it("settles a commit lost on the way: not applied, refused as late from then on", async () => {
    const inner = new MemoryStore();
    const sent = await request(inner);
    const store = over(inner, { commit: () => Promise.reject(new StateUnavailable("no answer within 2000 ms")) });
    expect(await commitKnown(store, sent)).toEqual({ ok: false, reason: "late" });
    expect(await inner.commit(sent)).toEqual({ ok: false, reason: "late" });
    expect(await inner.journal()).toEqual([]);
  });

  it("does not settle a commit refused before it was sent: the store's refusal is thrown as it is", async () => {
    const inner = new MemoryStore();
    const unsent = new StateUnavailable("not connected", 1, true);
    let settled = 0;
    const store = over(inner, {
      commit: () => Promise.reject(unsent),
      settle: (id, waitMs) => {
        settled++;
        return inner.settle(id, waitMs);
      },
    });
    await expect(commitKnown(store, await request(inner))).rejects.toBe(unsent);
    expect(settled).toBe(0);
  });

  it("says the outcome is not known when the store answers neither the commit nor settle within the window", async () => {
    const inner = new MemoryStore();
    let settles = 0;
    const store = over(inner, {
      commit: () => Promise.reject(new StateUnavailable("no answer within 2000 ms")),
      settle: () => {
        settles++;
        return Promise.reject(new StateUnavailable("not connected", 1, true));
      },
    });
    const error = await commitKnown(store, await request(inner), 250).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateUnavailable);
    expect(isUnknownOutcome(error)).toBe(true);
    expect((error as StateUnavailable).description).toBe(UNKNOWN);
    expect((error as StateUnavailable).status).toBe(503);
    // Asked again between failures, not once.
    expect(settles).toBeGreaterThan(1);
  });
});
