import type { StateUnavailable } from "../../core/errors.js";
import type { JournalRecord } from "../../control/journal.js";

/**
 * What the pipeline tells the shared state of the request it runs (`SharedState` does the rest):
 * that the request may change state, its journal record, its session's use, its log line, a reset.
 * `request` is the request as the pipeline received it: the key its run is found by.
 */
export interface SharedRun {
  /** The request may change state, the parts `scope` names: it runs alone on this replica. */
  exclusive(request: object, scope: RunScope): Promise<void>;
  journalRecord(request: object, record: JournalRecord): void;
  touch(request: object, session: string): void;
  /** Holds the log line until the commit; false outside a shared request (log it now). */
  whenCommitted(request: object, log: (unavailable: StateUnavailable | undefined) => void): boolean;
  /** The run holding the lock (a reset) empties the store's journal and feed after its commit. */
  clearAfterCommit(): void;
}

/**
 * The parts a request that changes state may change: those named, and, when sessions come and
 * go, any session made or ended by it. Only these are serialized and compared at its commit, so
 * its cost does not grow with the number of sessions.
 */
export interface RunScope {
  readonly parts: readonly string[];
  readonly sessionsComeAndGo: boolean;
  /** The part whose state the answer was made from (a rule-firing run's scenario). */
  readonly dependsOn?: string;
}
