import { StateUnavailable } from "../core/errors.js";
import {
  compareFeedIds,
  type CommitRequest,
  type CommitResult,
  type EpochChanges,
  type FeedEntry,
  type Reseed,
  type ReseedResult,
  type SettleResult,
  type StateChanges,
  type StateCursor,
  type StateStore,
  type StoredPart,
} from "../core/state-store.js";
import { checkCommit, checkCommitId, checkFeedArgs, checkReapArgs, checkReseed, RESET_EVENT } from "./op-checks.js";
import { type Change, changesIn, MemoryChangeLog, newsIn } from "./memory-change-log.js";
import { type ResolvedLimits, resolveLimits, type StoreLimits } from "./store-limits.js";

interface HeldFeedEntry extends FeedEntry {
  readonly n: number;
}

/** Where a stored state came from: this many reseeds back. */
const ANCESTRY_KEPT = 16;
/** Commit outcomes remembered for `settle`, the newest. */
const OUTCOMES_KEPT = 10_000;

/**
 * The state store in this process: sandboxes given the same MemoryStore share their state as
 * replicas on a Redis store do, with the same answers (the contract suite holds both to them).
 * Each operation runs to its end before another starts, which is what makes it atomic here.
 */
export class MemoryStore implements StateStore {
  readonly shownAs = "memory";
  readonly #limits: ResolvedLimits;
  #epoch = newEpoch();
  #lineage: string | undefined;
  /** Where the stored state came from, newest first (StateChanges.ancestry). */
  #ancestry: string[] = [];
  /** When the stored state was written back from a replica's (wall-clock ms); undefined when seeded fresh. */
  #reseededAt: number | undefined;
  readonly #parts = new Map<string, { version: number; json: string }>();
  readonly #log: MemoryChangeLog;
  readonly #keys = new Map<string, string>();
  #journal: Array<{ seq: number; json: string }> = [];
  #journalSeq = 0;
  #feed: HeldFeedEntry[] = [];
  #feedCount = 0;
  /** Live sessions' parts → last use (wall-clock ms). */
  readonly #live = new Map<string, number>();
  /** Commit id → its journal number (0: none) and the position after it, or "void": not applied, and never will be. */
  readonly #outcomes = new Map<string, { seq: number; position: number } | "void">();
  readonly #waiters = new Set<() => void>();
  #closed = false;

  constructor(limits: StoreLimits = {}) {
    this.#limits = resolveLimits(limits);
    this.#log = new MemoryChangeLog(this.#limits.changeLogSize);
  }

  async sync(cursor: StateCursor): Promise<StateChanges> {
    this.#open("sync");
    const since = this.#log.kept(cursor, this.#epoch);
    const head = {
      cursor: `${this.#epoch}:${this.#log.count}`,
      epoch: this.#epoch,
      lineage: this.#lineage,
      position: this.#log.count,
      ancestry: [...this.#ancestry],
      reseededMsAgo: this.#reseededAt === undefined ? undefined : Date.now() - this.#reseededAt,
    };
    if (since === undefined) {
      return {
        ...head,
        full: true,
        parts: [...this.#parts.keys()].sort().map((name) => this.#stored(name)!),
        removed: [],
        records: this.#log.records(),
        keys: [...this.#keys.values()],
      };
    }
    return { ...head, full: false, ...changesIn(this.#log.after(since), (name) => this.#stored(name)) };
  }

  async commit(request: CommitRequest): Promise<CommitResult> {
    checkCommit(request);
    this.#open("commit");
    if (this.#outcomes.has(request.id)) return { ok: false, reason: "late" };
    this.#remember(request.id, "void");
    if (Date.now() > request.deadlineMs) return { ok: false, reason: "late" };
    if (request.epoch !== this.#epoch) return { ok: false, reason: "conflict" };
    let before: Change[] | undefined;
    if (request.basis) {
      const since = this.#log.kept(request.basis.cursor, this.#epoch);
      if (since === undefined) return { ok: false, reason: "stale", changes: undefined };
      before = this.#log.after(since);
      before = before.filter((c) => c.origin !== request.basis!.origin);
      if (newsIn(before, request.basis)) return { ok: false, reason: "stale", changes: this.#changesIn(before) };
    }
    for (const [name, version] of Object.entries(request.read)) {
      if ((this.#parts.get(name)?.version ?? 0) !== version) return { ok: false, reason: "conflict" };
    }
    if (request.admit && !this.#live.has(request.admit.part) && this.#live.size >= request.admit.max) return { ok: false, reason: "full" };
    if (request.admit) this.#live.set(request.admit.part, request.touch!.atMs);
    if (request.touch) this.#touch(request.touch.part, request.touch.atMs);
    const { made, written, removed } = this.#write(request.writes);
    if (request.clearParts) {
      const kept = new Set(request.writes.map((w) => w.name));
      for (const name of [...this.#parts.keys()]) if (!kept.has(name)) this.#parts.delete(name);
      for (const part of [...this.#live.keys()]) if (!kept.has(part)) this.#live.delete(part);
    }
    const keys: string[] = [];
    for (const key of request.keys) {
      if (this.#keys.has(key.kid)) continue;
      this.#keys.set(key.kid, key.json);
      keys.push(key.json);
    }
    while (this.#keys.size > this.#limits.keysSize) this.#keys.delete(this.#keys.keys().next().value as string);
    this.#log.log({ origin: request.basis?.origin ?? "", made, written, removed, records: [...request.records], keys });
    let seq: number | undefined;
    if (request.journal !== undefined) {
      seq = ++this.#journalSeq;
      this.#journal.push({ seq, json: request.journal });
      if (this.#journal.length > this.#limits.journalSize) this.#journal.splice(0, this.#journal.length - this.#limits.journalSize);
      this.#appendFeed(seq, request.journal);
    }
    for (const event of request.events) this.#appendFeed(undefined, event);
    if (request.clearLogs) this.#clearLogs();
    if (request.journal !== undefined || request.events.length > 0 || request.clearLogs) this.#wake();
    const position = this.#log.count;
    this.#remember(request.id, { seq: seq ?? 0, position });
    if (!before) return { ok: true, seq, position };
    return { ok: true, seq, position, changes: { ...this.#changesIn(before), cursor: `${this.#epoch}:${position}`, position } };
  }

  /** A commit's part writes applied: the names made, written and removed, as the change log notes them. */
  #write(writes: CommitRequest["writes"]): { made: string[]; written: string[]; removed: string[] } {
    const made: string[] = [];
    const written: string[] = [];
    const removed: string[] = [];
    for (const write of writes) {
      if (write.json === undefined) {
        if (this.#removePart(write.name)) removed.push(write.name);
      } else {
        const version = this.#parts.get(write.name)?.version;
        this.#parts.set(write.name, { version: (version ?? 0) + 1, json: write.json });
        (version === undefined ? made : written).push(write.name);
      }
    }
    return { made, written, removed };
  }

  async settle(id: string, _waitMs: number): Promise<SettleResult> {
    checkCommitId(id);
    this.#open("settle");
    const outcome = this.#outcomes.get(id);
    if (outcome === undefined) this.#remember(id, "void");
    if (outcome === undefined || outcome === "void") return { applied: false };
    return { applied: true, seq: outcome.seq === 0 ? undefined : outcome.seq, position: outcome.position };
  }

  async reseed(state: Reseed): Promise<ReseedResult> {
    checkReseed(state);
    this.#open("reseed");
    if (this.#lineage !== undefined) {
      const [stored, given] = [BigInt(this.#lineage), BigInt(state.lineage)];
      if (stored < given) return { ok: false };
      if (stored === given && !furtherThan(state, this.#ancestry)) return { ok: false };
    }
    this.#epoch = newEpoch(this.#epoch);
    this.#lineage = state.lineage;
    this.#ancestry = [`${state.fromEpoch}:${state.position}`, ...state.ancestry].slice(0, ANCESTRY_KEPT);
    this.#reseededAt = state.fromEpoch === "" ? undefined : Date.now();
    this.#parts.clear();
    for (const part of state.parts) this.#parts.set(part.name, { version: 1, json: part.json });
    this.#keys.clear();
    for (const key of state.keys.slice(-this.#limits.keysSize)) this.#keys.set(key.kid, key.json);
    this.#log.restart(state.position);
    this.#journal = state.journal.slice(-this.#limits.journalSize).map((e) => ({ ...e }));
    this.#journalSeq = Math.max(this.#journalSeq, state.journalSeq);
    this.#live.clear();
    for (const { part, atMs } of state.live) if (this.#parts.has(part)) this.#live.set(part, atMs);
    return { ok: true, cursor: `${this.#epoch}:${state.position}`, epoch: this.#epoch };
  }

  async feed(after: string, limit: number, waitMs?: number): Promise<FeedEntry[]> {
    checkFeedArgs(limit, waitMs);
    if (after !== "" && !/^\d+-\d+$/.test(after)) {
      throw new TypeError(`A feed position of the memory store is "<ms>-<n>" or "" (from the oldest kept); got ${JSON.stringify(after)}.`);
    }
    const read = () => this.#feed.filter((e) => after === "" || compareFeedIds(e.id, after) > 0).slice(0, limit);
    this.#open("feed");
    const found = read();
    if (found.length > 0 || !waitMs) return found.map(shown);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.#waiters.add(done);
    });
    this.#open("feed");
    return read().map(shown);
  }

  async journal(): Promise<Array<{ seq: number; json: string }>> {
    this.#open("journal");
    return this.#journal.map((e) => ({ ...e }));
  }

  async reap(idleBeforeMs: number, limit: number): Promise<string[]> {
    checkReapArgs(idleBeforeMs, limit);
    this.#open("reap");
    const idle = [...this.#live]
      .filter(([, at]) => at < idleBeforeMs)
      .sort(([a, atA], [b, atB]) => atA - atB || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit)
      .map(([part]) => part);
    const removed: string[] = [];
    for (const part of idle) if (this.#removePart(part)) removed.push(part);
    this.#log.log({ origin: "", made: [], written: [], removed, records: [], keys: [] });
    return idle;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wake();
  }

  #open(op: string): void {
    if (this.#closed) throw new StateUnavailable(`The state store (memory) is closed: ${op} was called after close().`);
  }

  #stored(name: string): StoredPart | undefined {
    const part = this.#parts.get(name);
    return part && { name, version: part.version, json: part.json };
  }

  /** What `changes` changed, at the position they end at (the store's now: none come after them yet). */
  #changesIn(changes: readonly Change[]): EpochChanges {
    return { cursor: `${this.#epoch}:${this.#log.count}`, position: this.#log.count, ...changesIn(changes, (name) => this.#stored(name)) };
  }

  /** A touch of a part that is not live (ended meanwhile) is no use of anything. */
  #touch(part: string, atMs: number): void {
    const before = this.#live.get(part);
    if (before !== undefined && atMs > before) this.#live.set(part, atMs);
  }

  #remember(id: string, outcome: { seq: number; position: number } | "void"): void {
    this.#outcomes.delete(id);
    this.#outcomes.set(id, outcome);
    if (this.#outcomes.size > OUTCOMES_KEPT) this.#outcomes.delete(this.#outcomes.keys().next().value as string);
  }

  /** Removes a part (and its place among the live sessions); whether there was one. */
  #removePart(name: string): boolean {
    this.#live.delete(name);
    return this.#parts.delete(name);
  }

  /** The journal, the change log and the feed emptied; the change count moves on, so every cursor before syncs in full. */
  #clearLogs(): void {
    this.#journal = [];
    this.#log.clear();
    this.#feed = [];
    this.#appendFeed(undefined, RESET_EVENT);
  }

  /** Feed ids as Redis makes them: `<ms>-<n>`, increasing, across a reseed too. */
  #appendFeed(seq: number | undefined, json: string): void {
    const last = this.#feed[this.#feed.length - 1]?.id ?? this.#lastFeedId;
    const now = Date.now();
    const [ms = 0, n = 0] = last.split("-").map(Number);
    const id = now > ms ? `${now}-0` : `${ms}-${n + 1}`;
    this.#lastFeedId = id;
    this.#feed.push({ n: ++this.#feedCount, id, seq, json });
    if (this.#feed.length > this.#limits.feedSize) this.#feed.splice(0, this.#feed.length - this.#limits.feedSize);
  }

  #lastFeedId = "0-0";

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/**
 * Whether a reseed's state went further than the stored one: into the newest epoch both went
 * through, the reseed's further (reseed-14.lua makes the same check).
 */
function furtherThan(state: Reseed, stored: readonly string[]): boolean {
  const storedAt = new Map<string, number>();
  for (const point of stored) {
    const [epoch = "", position] = point.split(":");
    if (!storedAt.has(epoch)) storedAt.set(epoch, Number(position));
  }
  for (const point of [`${state.fromEpoch}:${state.position}`, ...state.ancestry]) {
    const [epoch = "", position] = point.split(":");
    const there = storedAt.get(epoch);
    if (there !== undefined) return Number(position) > there;
  }
  return false;
}

/** A new epoch: wall-clock microseconds as digits (as Redis's TIME gives), later than `before`. */
function newEpoch(before = "0"): string {
  const now = BigInt(Date.now()) * 1000n;
  const next = now > BigInt(before) ? now : BigInt(before) + 1n;
  return String(next);
}

function shown(entry: HeldFeedEntry): FeedEntry {
  return { id: entry.id, seq: entry.seq, json: entry.json };
}
