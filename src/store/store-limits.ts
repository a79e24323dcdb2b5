/**
 * How much a store keeps of what only grows: both stores bound their logs by the same options, so
 * the contract suite can hold them to the same answers with small limits.
 */

export interface StoreLimits {
  /** Journal entries kept (the newest); the journal's numbers go on past it. */
  journalSize?: number;
  /** Feed entries kept: journal records and events. Default: four times journalSize. */
  feedSize?: number;
  /** Change-log entries kept; a sync from a cursor older than the oldest kept is answered in full. */
  changeLogSize?: number;
  /** Signing keys kept (the newest). */
  keysSize?: number;
}

export type ResolvedLimits = Required<StoreLimits>;

export const DEFAULT_JOURNAL_SIZE = 1000;
export const DEFAULT_CHANGE_LOG_SIZE = 10_000;
export const DEFAULT_KEYS_SIZE = 1000;
/** Feed entries kept per journal entry kept: a request journaled and a few events of its own. */
export const FEED_PER_JOURNAL_ENTRY = 4;

/** The limits with their defaults, each checked: a positive whole number, or a clear error naming the option. */
export function resolveLimits(limits: StoreLimits = {}): ResolvedLimits {
  const journalSize = positive("journalSize", limits.journalSize, DEFAULT_JOURNAL_SIZE);
  return {
    journalSize,
    feedSize: positive("feedSize", limits.feedSize, FEED_PER_JOURNAL_ENTRY * journalSize),
    changeLogSize: positive("changeLogSize", limits.changeLogSize, DEFAULT_CHANGE_LOG_SIZE),
    keysSize: positive("keysSize", limits.keysSize, DEFAULT_KEYS_SIZE),
  };
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`The state store's ${name} is ${String(value)}: give a whole number of entries, 1 or more (default ${fallback}).`);
  }
  return value;
}
