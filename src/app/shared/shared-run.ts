import type { StateUnavailable } from "../../core/errors.js";
import type { JournalRecord } from "../../control/journal.js";

/**
 * One run of a request on a replica that shares its state, as the pipeline is handed it with the
 * request (`SharedState.wrap`): what the pipeline tells the shared state of it (`SharedState`
 * does the rest). Without shared state the pipeline is handed none.
 */
export interface SharedRun {
  /** The request may change state, the parts `scope` names: it runs alone on this replica. */
  exclusive(scope: RunScope): Promise<void>;
  /** Its journal record: numbered by the store when committed. */
  journalRecord(record: JournalRecord): void;
  /** It was its session's use (its idle time starts again, on every replica). */
  touch(session: string): void;
  /** Its log line, written once its commit is stored (a run that lost a race is not logged). */
  whenCommitted(log: (unavailable: StateUnavailable | undefined) => void): void;
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
