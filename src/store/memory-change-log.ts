import type { EpochChanges, RunBasis, StoredPart } from "../core/state-store.js";

/** One commit's mark in the change log: who made it, what it changed, by name, and what it appended. */
export interface Change {
  readonly n: number;
  /** The replica whose commit it was; "" for the store's own (a reap). */
  readonly origin: string;
  /** Parts written that were not there before. */
  readonly made: readonly string[];
  readonly written: readonly string[];
  readonly removed: readonly string[];
  readonly records: readonly string[];
  readonly keys: readonly string[];
}

type Lists = Pick<EpochChanges, "parts" | "removed" | "records" | "keys">;

/**
 * The memory store's change log: the newest changes, numbered from the epoch's start, as
 * lua/includes/logChange.lua keeps them in Redis, and the readings both stores make of it
 * (changesKept, changesIn, newsIn there).
 */
export class MemoryChangeLog {
  #changes: Change[] = [];
  /** The number of the newest change; a clear counts one, so every cursor before it syncs in full. */
  count = 0;

  constructor(private readonly size: number) {}

  log(change: Omit<Change, "n">): void {
    const { made, written, removed, records, keys } = change;
    if (made.length + written.length + removed.length + records.length + keys.length === 0) return;
    this.#changes.push({ ...change, n: ++this.count });
    if (this.#changes.length > this.size) this.#changes.splice(0, this.#changes.length - this.size);
  }

  /** Emptied; the count moves on, so every cursor before reads in full. */
  clear(): void {
    this.#changes = [];
    this.count++;
  }

  /** Emptied, counting on from `position` (a reseed). */
  restart(position: number): void {
    this.#changes = [];
    this.count = position;
  }

  /** The position after which changes are wanted, when `cursor` is of `epoch` and every change after it is kept. */
  kept(cursor: string, epoch: string): number | undefined {
    const at = /^(\d+):(\d+)$/.exec(cursor);
    const since = at && at[1] === epoch ? Number(at[2]) : undefined;
    const oldestKept = this.#changes[0]?.n ?? this.count + 1;
    return since !== undefined && since <= this.count && oldestKept <= since + 1 ? since : undefined;
  }

  after(since: number): Change[] {
    return this.#changes.filter((c) => c.n > since);
  }

  /** Every record the log keeps (a sync in full). */
  records(): string[] {
    return this.#changes.flatMap((c) => c.records);
  }
}

/** What `changes` changed: each part once, as stored now (`stored`: undefined when gone), sorted by name. */
export function changesIn(changes: readonly Change[], stored: (name: string) => StoredPart | undefined): Lists {
  const names = new Set<string>();
  const records: string[] = [];
  const keys: string[] = [];
  for (const change of changes) {
    for (const name of [...change.made, ...change.written, ...change.removed]) names.add(name);
    records.push(...change.records);
    keys.push(...change.keys);
  }
  const sorted = [...names].sort();
  return {
    parts: sorted.map(stored).filter((p): p is StoredPart => p !== undefined),
    removed: sorted.filter((name) => stored(name) === undefined),
    records,
    keys,
  };
}

/** Whether another replica's change among `changes` is news to a request of `basis` (RunBasis). */
export function newsIn(changes: readonly Change[], basis: RunBasis): boolean {
  const own = new Set(basis.ownParts);
  const read = (name: string) => own.has(name) || !name.startsWith(basis.privatePrefix);
  return changes.some(
    (c) =>
      c.origin !== basis.origin &&
      (c.made.length > 0 || c.removed.length > 0 || c.keys.length > 0 || (basis.recordsRead && c.records.length > 0) || c.written.some(read)),
  );
}
