import { StateUnavailable } from "../core/errors.js";
import type { CommitRequest, CommitResult, FeedEntry, StateChanges, StateCursor, StateStore, StoredPart } from "../core/state-store.js";
import { checkCommit, checkFeedArgs, checkReapArgs, RESET_EVENT, SESSION_PART_PREFIX, sessionOfPart } from "./op-checks.js";
import { type ResolvedLimits, resolveLimits, type StoreLimits } from "./store-limits.js";

/** One commit's mark in the change log: what it changed, by name, and what it appended. */
interface Change {
  readonly n: number;
  readonly written: readonly string[];
  readonly removed: readonly string[];
  readonly records: readonly string[];
  readonly keys: readonly string[];
}

interface HeldFeedEntry extends FeedEntry {
  readonly n: number;
}

/**
 * The state store in this process: sandboxes given the same MemoryStore share their state as
 * replicas on a Redis store do, with the same answers (the contract suite holds both to them).
 * Each operation runs to its end before another starts, which is what makes it atomic here.
 */
export class MemoryStore implements StateStore {
  readonly shownAs = "memory";
  readonly #limits: ResolvedLimits;
  readonly #parts = new Map<string, { version: number; json: string }>();
  #changes: Change[] = [];
  /** The number of the newest change; a clear counts one, so every cursor before it syncs in full. */
  #changeCount = 0;
  readonly #keys = new Map<string, string>();
  #journal: Array<{ seq: number; json: string }> = [];
  #journalSeq = 0;
  #feed: HeldFeedEntry[] = [];
  #feedCount = 0;
  readonly #lastUse = new Map<string, number>();
  readonly #waiters = new Set<() => void>();
  #closed = false;

  constructor(limits: StoreLimits = {}) {
    this.#limits = resolveLimits(limits);
  }

  async sync(cursor: StateCursor): Promise<StateChanges> {
    this.#open("sync");
    const since = /^\d+$/.test(cursor) ? Number(cursor) : undefined;
    const oldestKept = this.#changes[0]?.n ?? this.#changeCount + 1;
    const incremental = since !== undefined && since <= this.#changeCount && oldestKept <= since + 1;
    const next = String(this.#changeCount);
    if (!incremental) {
      return {
        cursor: next,
        full: true,
        parts: [...this.#parts.keys()].sort().map((name) => this.#stored(name)),
        removed: [],
        records: this.#changes.flatMap((c) => c.records),
        keys: [...this.#keys.values()],
      };
    }
    const last = new Map<string, "written" | "removed">();
    const records: string[] = [];
    const keys: string[] = [];
    for (const change of this.#changes) {
      if (change.n <= since) continue;
      for (const name of change.written) last.set(name, "written");
      for (const name of change.removed) last.set(name, "removed");
      records.push(...change.records);
      keys.push(...change.keys);
    }
    const names = [...last.keys()].sort();
    return {
      cursor: next,
      full: false,
      parts: names.filter((name) => this.#parts.has(name)).map((name) => this.#stored(name)),
      removed: names.filter((name) => !this.#parts.has(name)),
      records,
      keys,
    };
  }

  async commit(request: CommitRequest): Promise<CommitResult> {
    checkCommit(request);
    this.#open("commit");
    if (Date.now() > request.deadlineMs) return { ok: false, reason: "late" };
    for (const [name, version] of Object.entries(request.read)) {
      if ((this.#parts.get(name)?.version ?? 0) !== version) return { ok: false, reason: "conflict" };
    }
    if (request.touch) this.#touch(request.touch.session, request.touch.atMs);
    const written: string[] = [];
    const removed: string[] = [];
    for (const write of request.writes) {
      if (write.json === undefined) {
        if (this.#removePart(write.name)) removed.push(write.name);
      } else {
        this.#parts.set(write.name, { version: (this.#parts.get(write.name)?.version ?? 0) + 1, json: write.json });
        written.push(write.name);
      }
    }
    const keys: string[] = [];
    for (const key of request.keys) {
      if (this.#keys.has(key.kid)) continue;
      this.#keys.set(key.kid, key.json);
      keys.push(key.json);
    }
    while (this.#keys.size > this.#limits.keysSize) this.#keys.delete(this.#keys.keys().next().value as string);
    this.#logChange(written, removed, request.records, keys);
    let seq: number | undefined;
    if (request.journal !== undefined) {
      seq = ++this.#journalSeq;
      this.#journal.push({ seq, json: request.journal });
      if (this.#journal.length > this.#limits.journalSize) this.#journal.splice(0, this.#journal.length - this.#limits.journalSize);
      this.#appendFeed(seq, request.journal);
    }
    for (const event of request.events) this.#appendFeed(undefined, event);
    if (request.journal !== undefined || request.events.length > 0) this.#wake();
    return { ok: true, seq };
  }

  async feed(after: string, limit: number, waitMs?: number): Promise<FeedEntry[]> {
    checkFeedArgs(limit, waitMs);
    if (after !== "" && !/^\d+$/.test(after)) {
      throw new TypeError(`A feed position of the memory store is a whole number or "" (from the oldest kept); got ${JSON.stringify(after)}.`);
    }
    const from = after === "" ? 0 : Number(after);
    const read = () => this.#feed.filter((e) => e.n > from).slice(0, limit);
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
    const idle = [...this.#lastUse]
      .filter(([, at]) => at < idleBeforeMs)
      .sort(([a, atA], [b, atB]) => atA - atB || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit)
      .map(([session]) => session);
    const removed: string[] = [];
    for (const session of idle) {
      this.#lastUse.delete(session);
      if (this.#removePart(SESSION_PART_PREFIX + session)) removed.push(SESSION_PART_PREFIX + session);
    }
    this.#logChange([], removed, [], []);
    return idle;
  }

  async lastUse(sessions: readonly string[]): Promise<Array<number | undefined>> {
    this.#open("lastUse");
    return sessions.map((s) => this.#lastUse.get(s));
  }

  async ping(): Promise<void> {
    this.#open("ping");
  }

  async clear(): Promise<void> {
    this.#open("clear");
    this.#journal = [];
    this.#changes = [];
    this.#changeCount++;
    this.#feed = [];
    this.#appendFeed(undefined, RESET_EVENT);
    this.#wake();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wake();
  }

  #open(op: string): void {
    if (this.#closed) throw new StateUnavailable(`The state store (memory) is closed: ${op} was called after close().`);
  }

  #stored(name: string): StoredPart {
    const part = this.#parts.get(name)!;
    return { name, version: part.version, json: part.json };
  }

  #touch(session: string, atMs: number): void {
    const before = this.#lastUse.get(session);
    if (before === undefined || atMs > before) this.#lastUse.set(session, atMs);
  }

  /** Removes a part (and, for a session's, its last use); whether there was one. */
  #removePart(name: string): boolean {
    const session = sessionOfPart(name);
    if (session !== undefined) this.#lastUse.delete(session);
    return this.#parts.delete(name);
  }

  #logChange(written: string[], removed: string[], records: readonly string[], keys: string[]): void {
    if (written.length + removed.length + records.length + keys.length === 0) return;
    this.#changes.push({ n: ++this.#changeCount, written, removed, records: [...records], keys });
    if (this.#changes.length > this.#limits.changeLogSize) this.#changes.splice(0, this.#changes.length - this.#limits.changeLogSize);
  }

  #appendFeed(seq: number | undefined, json: string): void {
    const n = ++this.#feedCount;
    this.#feed.push({ n, id: String(n), seq, json });
    if (this.#feed.length > this.#limits.feedSize) this.#feed.splice(0, this.#feed.length - this.#limits.feedSize);
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

function shown(entry: HeldFeedEntry): FeedEntry {
  return { id: entry.id, seq: entry.seq, json: entry.json };
}
