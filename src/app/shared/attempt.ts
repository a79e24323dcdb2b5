import { StateUnavailable } from "../../core/errors.js";
import type { StateCursor, StateStore } from "../../core/state-store.js";
import type { SigningKey } from "../../core/signing-keys.js";
import type { JournalRecord } from "../../control/journal.js";
import type { FeedEvent } from "./shared-events.js";

/** One run of a request, and what its commit carries. */
export interface Attempt {
  events: FeedEvent[];
  journal: JournalRecord | undefined;
  touch: string | undefined;
  /** Parts this run may change, at the versions it found them (set once it holds the lock). */
  read: Map<string, number> | undefined;
  /** Sessions may be made or ended (a control-plane write outside any one session): their parts are the run's too. */
  sessionsComeAndGo: boolean;
  /** The part of the run's scenario, whose state its answer depends on (a rule-firing run's). */
  dependsOn: string | undefined;
  release: (() => void) | undefined;
  clearStore: boolean;
  /** The log line, told of the status the client finally got. */
  logged: ((unavailable: StateUnavailable | undefined) => void) | undefined;
  /** Tokens this run issued (their records) and keys it made: stored with its commit, or with nothing when it fails. */
  records: string[];
  keys: SigningKey[];
  /** Scenario delays of a locking run: waited for after its commit, not while it holds the lock. */
  delayMs: number;
  /** Where the replica's objects stood when the run began (its commit's RunBasis.cursor). */
  readonly basis: StateCursor;
  /** The ledger's missed lookups when the run began (TokenLedger.missed). */
  readonly missedAtStart: number;
  /** ReplicaCopy.syncedPastFailures when the run began. */
  readonly behindAtStart: number;
  /** RunCommit.undone and Runs.lockTurns when the run began. */
  readonly undoneAtStart: number;
  readonly lockTurnsAtStart: number;
}

/** Where a run begins: what its commit later compares against. */
export type RunStart = Pick<Attempt, "basis" | "missedAtStart" | "behindAtStart" | "undoneAtStart" | "lockTurnsAtStart">;

/** A run about to start: nothing collected, no lock held. */
export function newAttempt(start: RunStart): Attempt {
  // Every field named, in one order (no spread): every run has one shape, which V8 keeps fast.
  return {
    basis: start.basis,
    missedAtStart: start.missedAtStart,
    behindAtStart: start.behindAtStart,
    undoneAtStart: start.undoneAtStart,
    lockTurnsAtStart: start.lockTurnsAtStart,
    events: [],
    journal: undefined,
    touch: undefined,
    read: undefined,
    sessionsComeAndGo: false,
    dependsOn: undefined,
    release: undefined,
    clearStore: false,
    logged: undefined,
    records: [],
    keys: [],
    delayMs: 0,
  };
}

/**
 * What a client is told when the store failed: that the sandbox's shared state did not answer,
 * never the store's address or an internal message (those are for the replica's operator: the
 * health check and the replica's stderr).
 */
export function asUnavailable(e: unknown, store: StateStore, detailed = false): StateUnavailable {
  // The health check is the operator's: it says which store and what failed (its password hidden).
  if (detailed) {
    const why = e instanceof StateUnavailable ? e.description : `${(e as Error)?.message ?? String(e)}`;
    return new StateUnavailable(`The shared state at ${store.shownAs} is not usable from this replica: ${why}`);
  }
  return new StateUnavailable(
    "The sandbox's shared state did not answer in time, so this request was not run, or nothing it did was stored. Retry after Retry-After seconds.",
  );
}

/** The journal record of a run whose rule delays are waited for after its commit: its duration includes them. */
export function withDelay(record: JournalRecord, delayMs: number): JournalRecord {
  return delayMs > 0 ? { ...record, durationMs: Math.round((record.durationMs + delayMs) * 1000) / 1000 } : record;
}
