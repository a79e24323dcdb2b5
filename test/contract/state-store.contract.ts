import { afterEach, describe, expect, it } from "vitest";
import { StateUnavailable } from "../../src/core/errors.js";
import type { CommitRequest, StateStore } from "../../src/core/state-store.js";
import type { StoreLimits } from "../../src/store/store-limits.js";
import { over } from "../support/state-stores.js";

/**
 * The contract every StateStore keeps (src/core/state-store.ts), run against each implementation
 * by its own test file. `makeStore` gives a new, empty store and a way to open another handle on
 * the same state: two handles are two replicas.
 */
export type MakeStore = (limits?: StoreLimits) => Promise<{ store: StateStore; replica: () => Promise<StateStore> }>;

const RESET = '{"kind":"reset"}';
/** Far enough ahead that no commit of these tests is late unless it means to be. */
const AHEAD_MS = 60_000;
/** How long a feed read waits in the waking tests: far longer than they take, so waking early shows. */
const LONG_WAIT_MS = 10_000;

/** A commit applied with no journal entry (so no number). */
const APPLIED = { ok: true, seq: undefined, position: expect.any(Number) };
const CONFLICT = { ok: false, reason: "conflict" };

/** A sync that brings nothing new, at `cursor`. */
function nothingSince(cursor: string) {
  return {
    cursor,
    epoch: expect.any(String),
    lineage: undefined,
    ancestry: [],
    position: expect.any(Number),
    full: false,
    parts: [],
    removed: [],
    records: [],
    keys: [],
  };
}

/**
 * A commit's epoch when the test means "the store's epoch now": the handles `open` gives read it
 * with a sync just before the commit (a sync changes nothing).
 */
export const CURRENT_EPOCH = "current";
let commitCount = 0;

/** A commit request with a new id, read in the store's current epoch unless `fields` say otherwise. */
export function request(fields: Partial<CommitRequest>): CommitRequest {
  return {
    id: `test:${process.pid}:${++commitCount}`,
    epoch: CURRENT_EPOCH,
    read: {},
    writes: [],
    records: [],
    keys: [],
    events: [],
    deadlineMs: Date.now() + AHEAD_MS,
    ...fields,
  };
}

/** `store`, whose commit reads the current epoch for a request that says CURRENT_EPOCH. */
export function inCurrentEpoch(store: StateStore): StateStore {
  return over(store, {
    commit: async (r) => store.commit(r.epoch === CURRENT_EPOCH ? { ...r, epoch: (await store.sync("")).epoch } : r),
    close: () => store.close(),
  });
}

export function describeStateStore(name: string, makeStore: MakeStore): void {
  describe(`StateStore contract: ${name}`, () => {
    const opened: StateStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    async function open(limits?: StoreLimits) {
      const made = await makeStore(limits);
      opened.push(made.store);
      return {
        store: inCurrentEpoch(made.store),
        replica: async () => {
          const other = await made.replica();
          opened.push(other);
          return inCurrentEpoch(other);
        },
      };
    }

    it("answers a sync from the start of an empty store in full, with nothing in it, and then nothing new", async () => {
      const { store } = await open();
      const first = await store.sync("");
      expect({ ...first, cursor: "", epoch: "" }).toEqual({
        position: 0,
        cursor: "",
        epoch: "",
        lineage: undefined,
        ancestry: [],
        full: true,
        parts: [],
        removed: [],
        records: [],
        keys: [],
      });
      expect(first.epoch).toMatch(/^\d{16}$/);
      expect(first.cursor).not.toBe("");
      expect(await store.sync(first.cursor)).toEqual(nothingSince(first.cursor));
    });

    it("commits new parts at version 1, counts each write, and syncs only what changed since a cursor", async () => {
      const { store, replica } = await open();
      const other = await replica();
      const c0 = (await store.sync("")).cursor;
      expect(
        await store.commit(
          request({
            read: { sandbox: 0, "s:a": 0 },
            writes: [
              { name: "sandbox", json: '{"v":1}' },
              { name: "s:a", json: "A1" },
            ],
          }),
        ),
      ).toEqual(APPLIED);
      const afterFirst = await other.sync(c0);
      expect(afterFirst).toMatchObject({ full: false, removed: [], records: [], keys: [] });
      expect(afterFirst.parts).toEqual([
        { name: "s:a", version: 1, json: "A1" },
        { name: "sandbox", version: 1, json: '{"v":1}' },
      ]);
      expect(await other.commit(request({ read: { sandbox: 1 }, writes: [{ name: "sandbox", json: '{"v":2}' }] }))).toEqual(APPLIED);
      const second = await store.sync(afterFirst.cursor);
      expect(second.parts).toEqual([{ name: "sandbox", version: 2, json: '{"v":2}' }]);
      expect(second.full).toBe(false);
      expect(await store.sync(second.cursor)).toEqual(nothingSince(second.cursor));
      const full = await store.sync("");
      expect(full.full).toBe(true);
      expect(full.parts).toEqual([
        { name: "s:a", version: 1, json: "A1" },
        { name: "sandbox", version: 2, json: '{"v":2}' },
      ]);
      expect(full.cursor).toBe(second.cursor);
    });

    it("gives a part changed several times since the cursor once, at its latest version", async () => {
      const { store } = await open();
      const c0 = (await store.sync("")).cursor;
      for (let v = 0; v < 3; v++) await store.commit(request({ read: { ledger: v }, writes: [{ name: "ledger", json: `L${v + 1}` }] }));
      expect((await store.sync(c0)).parts).toEqual([{ name: "ledger", version: 3, json: "L3" }]);
    });

    it("applies exactly one of two replicas' commits read at the same version; the other is a conflict with nothing applied", async () => {
      const { store, replica } = await open();
      const other = await replica();
      await store.commit(request({ read: { ledger: 0 }, writes: [{ name: "ledger", json: "L1" }] }));
      const c1 = (await other.sync("")).cursor;
      expect(
        await store.commit(request({ read: { ledger: 1 }, writes: [{ name: "ledger", json: "from a" }], journal: "ja", events: ["ea"] })),
      ).toEqual({
        ok: true,
        seq: 1,
        position: expect.any(Number),
      });
      const losing = request({
        read: { ledger: 1 },
        writes: [{ name: "ledger", json: "from b" }],
        records: ["rb"],
        keys: [{ kid: "kb", json: "KB" }],
        journal: "jb",
        events: ["eb"],
        touch: { part: "s:b", atMs: 5 },
        admit: { part: "s:b", max: 10 },
      });
      expect(await other.commit(losing)).toEqual(CONFLICT);
      expect(await other.sync(c1)).toEqual({
        cursor: expect.any(String),
        epoch: expect.any(String),
        lineage: undefined,
        ancestry: [],
        position: expect.any(Number),
        full: false,
        parts: [{ name: "ledger", version: 2, json: "from a" }],
        removed: [],
        records: [],
        keys: [],
      });
      expect(await other.journal()).toEqual([{ seq: 1, json: "ja" }]);
      expect((await other.feed("", 10)).map((e) => e.json)).toEqual(["ja", "ea"]);
      expect(await other.reap(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
      expect(await other.commit(request({ read: { "s:new": 1 }, writes: [{ name: "s:new", json: "x" }] }))).toEqual(CONFLICT);
      expect(await other.commit(request({ read: { ledger: 0 }, writes: [{ name: "ledger", json: "x" }] }))).toEqual(CONFLICT);
    });

    it("lets exactly one of 30 concurrent commits against the same read version through, on two replicas", async () => {
      const { store, replica } = await open();
      const other = await replica();
      await store.commit(request({ read: { "s:x": 0 }, writes: [{ name: "s:x", json: "start" }] }));
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? store : other).commit(request({ read: { "s:x": 1 }, writes: [{ name: "s:x", json: `w${i}` }], journal: `j${i}` })),
        ),
      );
      const applied = results.flatMap((r, i) => (r.ok ? [i] : []));
      expect(applied).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 29 }, () => CONFLICT));
      expect(results[applied[0]!]).toEqual({ ok: true, seq: 1, position: expect.any(Number) });
      expect((await store.sync("")).parts).toEqual([{ name: "s:x", version: 2, json: `w${applied[0]}` }]);
      expect(await other.journal()).toEqual([{ seq: 1, json: `j${applied[0]}` }]);
    });

    it("refuses a commit past its deadline as late, with nothing applied", async () => {
      const { store } = await open();
      const c0 = (await store.sync("")).cursor;
      const late = request({
        read: { sandbox: 0 },
        writes: [{ name: "sandbox", json: "S" }],
        records: ["r"],
        keys: [{ kid: "k", json: "K" }],
        journal: "j",
        events: ["e"],
        touch: { part: "s:a", atMs: 1 },
        admit: { part: "s:a", max: 10 },
        clearLogs: true,
        deadlineMs: Date.now() - 1,
      });
      expect(await store.commit(late)).toEqual({ ok: false, reason: "late" });
      expect(await store.sync(c0)).toEqual(nothingSince(c0));
      expect(await store.journal()).toEqual([]);
      expect(await store.feed("", 10)).toEqual([]);
      expect(await store.reap(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
      expect(await store.commit(request({ journal: "next" }))).toEqual({ ok: true, seq: 1, position: expect.any(Number) });
    });

    it("appends records and keys in order, keeps the first key of a kid, and bounds the keys kept", async () => {
      const { store, replica } = await open({ keysSize: 2 });
      const other = await replica();
      const c0 = (await store.sync("")).cursor;
      await store.commit(request({ records: ["r1", "r2"], keys: [{ kid: "k1", json: "K1" }] }));
      await other.commit(
        request({
          records: ["r3"],
          keys: [
            { kid: "k1", json: "K1 again" },
            { kid: "k2", json: "K2" },
          ],
        }),
      );
      const since = await other.sync(c0);
      expect({ records: since.records, keys: since.keys, full: since.full }).toEqual({
        records: ["r1", "r2", "r3"],
        keys: ["K1", "K2"],
        full: false,
      });
      const full = await store.sync("");
      expect({ records: full.records, keys: full.keys }).toEqual({ records: ["r1", "r2", "r3"], keys: ["K1", "K2"] });
      await store.commit(request({ keys: [{ kid: "k2", json: "K2 again" }] }));
      expect((await store.sync(since.cursor)).keys).toEqual([]);
      await store.commit(request({ keys: [{ kid: "k3", json: "K3" }] }));
      expect((await store.sync("")).keys).toEqual(["K2", "K3"]);
      await store.commit(request({ keys: [{ kid: "k1", json: "K1 anew" }] }));
      expect((await store.sync("")).keys).toEqual(["K3", "K1 anew"]);
    });

    it("numbers journal entries from 1, keeps the newest journalSize, and never reuses a number, the logs cleared or not", async () => {
      const { store, replica } = await open({ journalSize: 3 });
      const other = await replica();
      const seqs: Array<number | undefined> = [];
      for (let i = 1; i <= 5; i++) {
        const result = await (i % 2 ? store : other).commit(request({ journal: `J${i}` }));
        seqs.push(result.ok ? result.seq : -1);
      }
      expect(seqs).toEqual([1, 2, 3, 4, 5]);
      expect(await other.journal()).toEqual([
        { seq: 3, json: "J3" },
        { seq: 4, json: "J4" },
        { seq: 5, json: "J5" },
      ]);
      expect(await store.commit(request({ events: ["no journal"] }))).toEqual(APPLIED);
      expect(await store.commit(request({ clearLogs: true }))).toEqual(APPLIED);
      expect(await store.journal()).toEqual([]);
      expect(await other.commit(request({ journal: "J6" }))).toEqual({ ok: true, seq: 6, position: expect.any(Number) });
      expect(await store.journal()).toEqual([{ seq: 6, json: "J6" }]);
    });

    it("feeds journal records and events in commit order, from any position, within a limit and a bound", async () => {
      const { store, replica } = await open({ journalSize: 10, feedSize: 4 });
      const other = await replica();
      await store.commit(request({ journal: "J1", events: ["E1a", "E1b"] }));
      await other.commit(request({ events: ["E2"] }));
      const all = await other.feed("", 10);
      expect(all.map(({ seq, json }) => ({ seq, json }))).toEqual([
        { seq: 1, json: "J1" },
        { seq: undefined, json: "E1a" },
        { seq: undefined, json: "E1b" },
        { seq: undefined, json: "E2" },
      ]);
      expect(new Set(all.map((e) => e.id)).size).toBe(4);
      expect(await store.feed(all[0]!.id, 2)).toEqual(all.slice(1, 3));
      expect(await store.feed(all[3]!.id, 10)).toEqual([]);
      await store.commit(request({ journal: "J2", events: ["E3"] }));
      const bounded = await store.feed("", 10);
      expect(bounded.map((e) => e.json)).toEqual(["E1b", "E2", "J2", "E3"]);
      expect(bounded[2]!.seq).toBe(2);
      expect(bounded.slice(0, 2)).toEqual(all.slice(2, 4));
      await expect(store.feed("", 0)).rejects.toThrow(TypeError);
      await expect(store.feed("not a position", 1)).rejects.toThrow(TypeError);
    });

    it("waits in feed() for a new entry and wakes when one is committed, on the same handle or another", async () => {
      const { store, replica } = await open();
      const other = await replica();
      await store.commit(request({ journal: "J1" }));
      const [first] = await store.feed("", 10);
      const started = performance.now();
      const waiting = store.feed(first!.id, 10, LONG_WAIT_MS);
      const waitingToo = other.feed(first!.id, 10, LONG_WAIT_MS);
      // The store's own connection still answers while its feed read waits.
      expect(await store.commit(request({ events: ["E1"] }))).toEqual(APPLIED);
      const [woken, wokenToo] = await Promise.all([waiting, waitingToo]);
      expect(performance.now() - started).toBeLessThan(LONG_WAIT_MS);
      expect(woken.map(({ seq, json }) => ({ seq, json }))).toEqual([{ seq: undefined, json: "E1" }]);
      expect(wokenToo).toEqual(woken);
      const quiet = performance.now();
      expect(await other.feed(woken[0]!.id, 10, 50)).toEqual([]);
      expect(performance.now() - quiet).toBeGreaterThanOrEqual(45);
      expect(await other.feed(first!.id, 10, 50)).toEqual(woken);
    });

    it("answers in full, every part and key, a cursor older than the change log keeps; a newer one incrementally", async () => {
      const { store } = await open({ changeLogSize: 2 });
      const c0 = (await store.sync("")).cursor;
      await store.commit(request({ read: { p1: 0 }, writes: [{ name: "p1", json: "1" }], keys: [{ kid: "k", json: "K" }], records: ["r1"] }));
      const c1 = (await store.sync(c0)).cursor;
      await store.commit(request({ read: { p2: 0 }, writes: [{ name: "p2", json: "2" }] }));
      const c2 = (await store.sync(c1)).cursor;
      await store.commit(request({ read: { p3: 0 }, writes: [{ name: "p3", json: "3" }], records: ["r3"] }));
      await store.commit(
        request({
          read: { p4: 0, p1: 1 },
          writes: [
            { name: "p4", json: "4" },
            { name: "p1", json: undefined },
          ],
        }),
      );
      expect(await store.sync(c2)).toEqual({
        cursor: expect.any(String),
        epoch: expect.any(String),
        lineage: undefined,
        ancestry: [],
        position: expect.any(Number),
        full: false,
        parts: [
          { name: "p3", version: 1, json: "3" },
          { name: "p4", version: 1, json: "4" },
        ],
        removed: ["p1"],
        records: ["r3"],
        keys: [],
      });
      const full = await store.sync(c1);
      expect(full).toEqual({
        cursor: expect.any(String),
        epoch: expect.any(String),
        lineage: undefined,
        ancestry: [],
        position: expect.any(Number),
        full: true,
        parts: [
          { name: "p2", version: 1, json: "2" },
          { name: "p3", version: 1, json: "3" },
          { name: "p4", version: 1, json: "4" },
        ],
        removed: [],
        records: ["r3"],
        keys: ["K"],
      });
      expect(await store.sync("not a cursor")).toEqual(full);
    });

    it("keeps each live session's last use, the latest one, and reaps the idle oldest first, removing their parts", async () => {
      const { store, replica } = await open();
      const other = await replica();
      for (const [session, atMs] of [
        ["s:a", 1000],
        ["s:b", 2000],
        ["s:c", 3000],
      ] as const) {
        const admitted = request({
          read: { [session]: 0 },
          writes: [{ name: session, json: session }],
          touch: { part: session, atMs },
          admit: { part: session, max: 10 },
        });
        expect(await store.commit(admitted)).toEqual(APPLIED);
      }
      // An earlier use moves nothing back; a use of a part that is no live session makes none.
      await other.commit(request({ touch: { part: "s:a", atMs: 500 } }));
      await other.commit(request({ touch: { part: "s:unknown", atMs: 500 } }));
      const c0 = (await other.sync("")).cursor;
      expect(await other.reap(2500, 1)).toEqual(["s:a"]);
      expect(await store.reap(2500, 10)).toEqual(["s:b"]);
      expect(await store.reap(2500, 10)).toEqual([]);
      expect(await store.sync(c0)).toMatchObject({ full: false, parts: [], removed: ["s:a", "s:b"] });
      expect((await store.sync("")).parts).toEqual([{ name: "s:c", version: 1, json: "s:c" }]);
      await store.commit(request({ touch: { part: "s:c", atMs: 9000 } }));
      expect(await store.reap(8000, 10)).toEqual([]);
      expect(await store.commit(request({ read: { "s:c": 1 }, writes: [{ name: "s:c", json: undefined }] }))).toEqual(APPLIED);
      expect(await store.reap(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    });

    it("admits at most `max` live sessions: one more is refused as full with nothing applied, and an ended one frees its place", async () => {
      const { store, replica } = await open();
      const other = await replica();
      const admit = (part: string, journal?: string) =>
        request({
          read: { [part]: 0 },
          writes: [{ name: part, json: part }],
          touch: { part, atMs: 1000 },
          admit: { part, max: 2 },
          ...(journal && { journal }),
        });
      expect(await store.commit(admit("s:1"))).toEqual(APPLIED);
      expect(await other.commit(admit("s:2"))).toEqual(APPLIED);
      const c0 = (await store.sync("")).cursor;
      expect(await store.commit(admit("s:3", "J3"))).toEqual({ ok: false, reason: "full" });
      expect(await store.sync(c0)).toEqual(nothingSince(c0));
      expect(await store.journal()).toEqual([]);
      expect(await other.commit(request({ read: { "s:1": 1 }, writes: [{ name: "s:1", json: undefined }] }))).toEqual(APPLIED);
      expect(await store.commit(admit("s:3"))).toEqual(APPLIED);
      expect(await store.reap(Number.MAX_SAFE_INTEGER, 10)).toEqual(["s:2", "s:3"]);
    });

    it("a commit's logs cleared: the journal, records and feed emptied, one reset event, parts and keys kept, replicas sync in full", async () => {
      const { store, replica } = await open();
      const other = await replica();
      await store.commit(
        request({
          read: { sandbox: 0 },
          writes: [{ name: "sandbox", json: "S" }],
          records: ["r"],
          keys: [{ kid: "k", json: "K" }],
          journal: "J",
          events: ["E"],
        }),
      );
      const cursor = (await other.sync("")).cursor;
      const [, last] = await other.feed("", 10);
      const following = other.feed(last!.id, 10, LONG_WAIT_MS);
      expect(await store.commit(request({ read: { sandbox: 1 }, writes: [{ name: "sandbox", json: "S2" }], clearLogs: true }))).toEqual(APPLIED);
      const reset = await following;
      expect(reset.map(({ seq, json }) => ({ seq, json }))).toEqual([{ seq: undefined, json: RESET }]);
      expect(await other.feed("", 10)).toEqual(reset);
      expect(await other.journal()).toEqual([]);
      const after = await other.sync(cursor);
      expect({ ...after, cursor: "" }).toEqual({
        cursor: "",
        epoch: expect.any(String),
        lineage: undefined,
        ancestry: [],
        position: expect.any(Number),
        full: true,
        parts: [{ name: "sandbox", version: 2, json: "S2" }],
        removed: [],
        records: [],
        keys: ["K"],
      });
      expect(await other.sync(after.cursor)).toMatchObject({ full: false, parts: [], records: [] });
    });

    it("refuses a commit read in another epoch as a conflict, with nothing applied", async () => {
      const { store } = await open();
      const c0 = await store.sync("");
      const elsewhere = request({ epoch: "1", read: { sandbox: 0 }, writes: [{ name: "sandbox", json: "S" }], journal: "J" });
      expect(await store.commit(elsewhere)).toEqual(CONFLICT);
      expect(await store.sync(c0.cursor)).toEqual(nothingSince(c0.cursor));
      expect(await store.journal()).toEqual([]);
    });

    it("settles a commit: applied with its number, or, never seen, not applied and refused when it comes later", async () => {
      const { store, replica } = await open();
      const other = await replica();
      const applied = request({ journal: "J1" });
      expect(await store.commit(applied)).toEqual({ ok: true, seq: 1, position: expect.any(Number) });
      expect(await other.settle(applied.id, 1000)).toEqual({ applied: true, seq: 1, position: expect.any(Number) });
      const quiet = request({ events: ["E"] });
      expect(await store.commit(quiet)).toEqual(APPLIED);
      expect(await other.settle(quiet.id, 1000)).toEqual({ applied: true, seq: undefined, position: expect.any(Number) });
      const lost = request({ read: { sandbox: 0 }, writes: [{ name: "sandbox", json: "S" }], journal: "J2" });
      expect(await other.settle(lost.id, 1000)).toEqual({ applied: false });
      const c0 = (await store.sync("")).cursor;
      expect(await store.commit(lost)).toEqual({ ok: false, reason: "late" });
      expect(await store.sync(c0)).toEqual(nothingSince(c0));
      expect(await store.settle(lost.id, 1000)).toEqual({ applied: false });
      // A conflict settles as not applied; an id is never applied twice.
      const refused = request({ read: { sandbox: 5 }, writes: [{ name: "sandbox", json: "S" }] });
      expect(await store.commit(refused)).toEqual(CONFLICT);
      expect(await store.settle(refused.id, 1000)).toEqual({ applied: false });
      expect(await store.commit(applied)).toEqual({ ok: false, reason: "late" });
      expect(await store.journal()).toEqual([{ seq: 1, json: "J1" }]);
      await expect(store.settle("no spaces here", 1000)).rejects.toThrow(TypeError);
    });

    it("reseeds an unseeded store whole, in a new epoch, and refuses a reseed of a younger or the same lineage", async () => {
      const { store, replica } = await open({ journalSize: 2 });
      const other = await replica();
      await store.commit(request({ read: { old: 0 }, writes: [{ name: "old", json: "O" }], journal: "J1" }));
      const before = await other.sync("");
      const state = {
        lineage: "1700000000000000",
        fromEpoch: "1690000000000000",
        position: 40,
        ancestry: [] as string[],
        parts: [
          { name: "sandbox", json: "S" },
          { name: "s:a", json: "A" },
        ],
        keys: [{ kid: "k", json: "K" }],
        journal: [
          { seq: 7, json: "J7" },
          { seq: 8, json: "J8" },
          { seq: 9, json: "J9" },
        ],
        journalSeq: 9,
        live: [
          { part: "s:a", atMs: 1000 },
          { part: "s:gone", atMs: 1000 },
        ],
      };
      const seeded = await other.reseed(state);
      expect(seeded).toEqual({ ok: true, cursor: expect.any(String), epoch: expect.any(String) });
      if (!seeded.ok) return;
      expect(seeded.epoch).not.toBe(before.epoch);
      const after = await store.sync(before.cursor);
      expect(after).toEqual({
        cursor: seeded.cursor,
        epoch: seeded.epoch,
        lineage: "1700000000000000",
        position: 40,
        ancestry: ["1690000000000000:40"],
        reseededMsAgo: expect.any(Number),
        full: true,
        parts: [
          { name: "s:a", version: 1, json: "A" },
          { name: "sandbox", version: 1, json: "S" },
        ],
        removed: [],
        records: [],
        keys: ["K"],
      });
      expect(await store.journal()).toEqual([
        { seq: 8, json: "J8" },
        { seq: 9, json: "J9" },
      ]);
      // A commit read before the reseed is of the old epoch; numbering goes on after the reseed's.
      expect(await store.commit(request({ epoch: before.epoch, journal: "late" }))).toEqual(CONFLICT);
      expect(await store.commit(request({ journal: "J10" }))).toEqual({ ok: true, seq: 10, position: expect.any(Number) });
      // Refused: as far into the same epoch, another epoch of the same lineage, a younger lineage.
      expect(await store.reseed(state)).toEqual({ ok: false });
      expect(await store.reseed({ ...state, fromEpoch: seeded.epoch, position: 99 })).toEqual({ ok: false });
      expect(await store.reseed({ ...state, lineage: "1800000000000000", position: 99 })).toEqual({ ok: false });
      expect(await store.reap(Number.MAX_SAFE_INTEGER, 10)).toEqual(["s:a"]);
      // Taken: further into the same epoch (a replica that had seen more of it); from an epoch
      // reseeded from the stored origin at or past it; an older lineage.
      const further = await store.reseed({ ...state, position: 41, journal: [], journalSeq: 3 });
      expect(further).toMatchObject({ ok: true });
      expect((await store.sync("")).position).toBe(41);
      // (The stored state is now 41 into epoch 169…: a state of another epoch that went through
      // 169… only to 41 did not go further; one that went to 42 did.)
      const behind = { ...state, fromEpoch: "1695000000000000", position: 99, ancestry: ["1690000000000000:41", "1680000000000000:9"] };
      expect(await store.reseed(behind)).toEqual({ ok: false });
      const beyond = await store.reseed({ ...behind, ancestry: ["1690000000000000:42"] });
      expect(beyond).toMatchObject({ ok: true });
      expect((await store.sync("")).ancestry).toEqual(["1695000000000000:99", "1690000000000000:42"]);
      const older = await store.reseed({ ...state, lineage: "1600000000000000", position: 0, journal: [], journalSeq: 3 });
      expect(older).toMatchObject({ ok: true });
      expect(await store.commit(request({ journal: "J11" }))).toEqual({ ok: true, seq: 11, position: expect.any(Number) });
    });

    it("removes a part: synced as removed, gone from a full sync, and at version 0 again", async () => {
      const { store, replica } = await open();
      const other = await replica();
      await store.commit(
        request({
          read: { "s:gone": 0, sandbox: 0 },
          writes: [
            { name: "s:gone", json: "G" },
            { name: "sandbox", json: "S" },
          ],
        }),
      );
      const c0 = (await other.sync("")).cursor;
      expect(await other.commit(request({ read: { "s:gone": 1 }, writes: [{ name: "s:gone", json: undefined }] }))).toEqual(APPLIED);
      expect(await store.sync(c0)).toEqual({ ...nothingSince(c0), cursor: expect.any(String), removed: ["s:gone"] });
      expect((await store.sync("")).parts).toEqual([{ name: "sandbox", version: 1, json: "S" }]);
      expect(await store.commit(request({ read: { "s:gone": 1 }, writes: [{ name: "s:gone", json: "again" }] }))).toEqual(CONFLICT);
      expect(await store.commit(request({ read: { "s:gone": 0 }, writes: [{ name: "s:gone", json: "again" }] }))).toEqual(APPLIED);
      expect((await other.sync("")).parts).toEqual([
        { name: "s:gone", version: 1, json: "again" },
        { name: "sandbox", version: 1, json: "S" },
      ]);
    });

    it("refuses a write of a part the commit did not read, before anything is applied", async () => {
      const { store } = await open();
      await expect(store.commit(request({ writes: [{ name: "sandbox", json: "S" }], journal: "J" }))).rejects.toThrow(
        'A commit writes part "sandbox" without having read it',
      );
      expect(await store.journal()).toEqual([]);
    });

    it("close() ends a waiting feed read, and after it every call is refused as unavailable", async () => {
      const { store } = await open();
      const started = performance.now();
      const waiting = store.feed("", 10, LONG_WAIT_MS);
      waiting.catch(() => {});
      await store.close();
      await expect(waiting).rejects.toThrow(StateUnavailable);
      expect(performance.now() - started).toBeLessThan(LONG_WAIT_MS);
      await expect(store.sync("")).rejects.toThrow(StateUnavailable);
      await expect(store.settle("x", 100)).rejects.toThrow(StateUnavailable);
      await expect(store.commit(request({}))).rejects.toThrow(StateUnavailable);
    });
  });
}
