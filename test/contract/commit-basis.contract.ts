import { afterEach, describe, expect, it } from "vitest";
import type { CommitRequest, RunBasis, StateStore } from "../../src/core/state-store.js";
import { type MakeStore, request } from "./state-store.contract.js";

/**
 * The contract of a commit's basis (core/state-store.ts, RunBasis), run against each store by its
 * own test file: another replica's change since the basis that is news to the request refuses
 * the commit as stale, with the changes; any other is answered with the applied commit.
 */

const A = "replica-a";
const B = "replica-b";

/** A basis of `origin` at `cursor` that read `own` among the sessions' parts. */
function basis(cursor: string, origin: string, fields: Partial<RunBasis> = {}): RunBasis {
  return { cursor, origin, privatePrefix: "s:", ownParts: [], recordsRead: false, ...fields };
}

/** A stale refusal at `position` of `epoch`, with these changes (none of a kind not given). */
function stale(epoch: string, position: number, changes: Partial<{ parts: unknown[]; removed: string[]; records: string[]; keys: string[] }>) {
  return {
    ok: false,
    reason: "stale",
    changes: { cursor: `${epoch}:${position}`, position, parts: [], removed: [], records: [], keys: [], ...changes },
  };
}

export function describeCommitBasis(name: string, makeStore: MakeStore): void {
  describe(`StateStore commit basis: ${name}`, () => {
    const opened: StateStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    /** A store with parts "sandbox" and "s:x" stored, and its cursor and epoch after them. */
    async function seeded() {
      const made = await makeStore();
      opened.push(made.store);
      const store = made.store;
      const { epoch } = await store.sync("");
      const writes = [
        { name: "sandbox", json: "S1" },
        { name: "s:x", json: "X1" },
      ];
      await store.commit(request({ epoch, read: { sandbox: 0, "s:x": 0 }, writes }));
      const { cursor } = await store.sync("");
      const commit = (fields: Partial<CommitRequest>) => store.commit(request({ epoch, ...fields }));
      return { store, cursor, epoch, commit };
    }

    it("applies a commit with nothing new since its basis, answering no changes and the cursor after it", async () => {
      const { cursor, epoch, commit } = await seeded();
      const result = await commit({ journal: "J", basis: basis(cursor, A) });
      expect(result).toEqual({
        ok: true,
        seq: 1,
        position: 1,
        changes: { cursor: `${epoch}:1`, position: 1, parts: [], removed: [], records: [], keys: [] },
      });
    });

    it("refuses as stale, with the changes, when another replica wrote a part every request reads", async () => {
      const { cursor, epoch, commit } = await seeded();
      await commit({ read: { sandbox: 1 }, writes: [{ name: "sandbox", json: "S2" }], basis: basis(cursor, B) });
      expect(await commit({ journal: "J", basis: basis(cursor, A) })).toEqual({
        ok: false,
        reason: "stale",
        changes: { cursor: `${epoch}:2`, position: 2, parts: [{ name: "sandbox", version: 2, json: "S2" }], removed: [], records: [], keys: [] },
      });
    });

    it("applies over its own replica's changes and another session's write, answering only the other replica's", async () => {
      const { cursor, epoch, commit } = await seeded();
      await commit({ read: { sandbox: 1 }, writes: [{ name: "sandbox", json: "S2" }], basis: basis(cursor, A) });
      await commit({ read: { "s:x": 1 }, writes: [{ name: "s:x", json: "X2" }], basis: basis(`${epoch}:2`, B) });
      const result = await commit({ journal: "J", basis: basis(cursor, A, { ownParts: ["s:y"] }) });
      expect(result).toEqual({
        ok: true,
        seq: 1,
        position: 3,
        changes: {
          cursor: `${epoch}:3`,
          position: 3,
          // Its own write of the sandbox's part is in its objects: only the other's comes.
          parts: [{ name: "s:x", version: 2, json: "X2" }],
          removed: [],
          records: [],
          keys: [],
        },
      });
    });

    it("refuses as stale a write of a session's part the request read, and a session made or removed by another replica", async () => {
      const written = await seeded();
      await written.commit({ read: { "s:x": 1 }, writes: [{ name: "s:x", json: "X2" }], basis: basis(written.cursor, B) });
      expect(await written.commit({ journal: "J", basis: basis(written.cursor, A, { ownParts: ["s:x"] }) })).toEqual(
        stale(written.epoch, 2, { parts: [{ name: "s:x", version: 2, json: "X2" }] }),
      );
      const made = await seeded();
      await made.commit({ read: { "s:new": 0 }, writes: [{ name: "s:new", json: "N" }], basis: basis(made.cursor, B) });
      expect(await made.commit({ journal: "J", basis: basis(made.cursor, A) })).toEqual(
        stale(made.epoch, 2, { parts: [{ name: "s:new", version: 1, json: "N" }] }),
      );
      const removal = await seeded();
      await removal.commit({ read: { "s:x": 1 }, writes: [{ name: "s:x", json: undefined }], basis: basis(removal.cursor, B) });
      expect(await removal.commit({ journal: "J", basis: basis(removal.cursor, A) })).toEqual(stale(removal.epoch, 2, { removed: ["s:x"] }));
      // Refused: none of the three requests was journaled.
      for (const s of [written, made, removal]) expect(await s.store.journal()).toEqual([]);
    });

    it("counts another replica's records as news only to a request that missed one; its keys always", async () => {
      const { cursor, epoch, commit } = await seeded();
      await commit({ records: ["R1"], basis: basis(cursor, B) });
      expect(await commit({ journal: "J1", basis: basis(cursor, A) })).toEqual({
        ok: true,
        seq: 1,
        position: 2,
        changes: { cursor: `${epoch}:2`, position: 2, parts: [], removed: [], records: ["R1"], keys: [] },
      });
      expect(await commit({ journal: "J2", basis: basis(cursor, A, { recordsRead: true }) })).toEqual(stale(epoch, 2, { records: ["R1"] }));
      await commit({ keys: [{ kid: "k1", json: "K1" }], basis: basis(cursor, B) });
      expect(await commit({ journal: "J3", basis: basis(cursor, A) })).toEqual(stale(epoch, 3, { records: ["R1"], keys: ["K1"] }));
    });

    it("refuses as stale with no changes a basis older than the change log keeps, and a stale commit applies nothing", async () => {
      const made = await makeStore({ changeLogSize: 2 });
      opened.push(made.store);
      const store = made.store;
      const { epoch, cursor } = await store.sync("");
      for (let v = 0; v < 3; v++) await store.commit(request({ epoch, read: { sandbox: v }, writes: [{ name: "sandbox", json: `S${v + 1}` }] }));
      const refused = request({ epoch, journal: "J", records: ["R"], basis: basis(cursor, A) });
      expect(await store.commit(refused)).toEqual({ ok: false, reason: "stale", changes: undefined });
      expect(await store.journal()).toEqual([]);
      expect((await store.sync("")).records).toEqual([]);
      expect(await store.settle(refused.id, 1000)).toEqual({ applied: false });
    });
  });
}
