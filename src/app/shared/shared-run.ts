import type { StateUnavailable } from "../../core/errors.js";
import type { JournalRecord } from "../../control/journal.js";

/**
 * What the pipeline tells the shared state of the request it runs (`SharedState` does the rest):
 * that the request may change state, its journal record, its session's use, its log line, a reset.
 */
export interface SharedRun {
  /** The request may change state: it runs alone on this replica; `scope` is its scenario's part, undefined any part. */
  exclusive(scope: string | undefined): Promise<void>;
  journalRecord(record: JournalRecord): void;
  touch(session: string): void;
  /** Holds the log line until the commit; false outside a shared request (log it now). */
  whenCommitted(log: (unavailable: StateUnavailable | undefined) => void): boolean;
  clearAfterCommit(): void;
}
