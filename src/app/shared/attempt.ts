import { StateUnavailable } from "../../core/errors.js";
import type { StateStore } from "../../core/state-store.js";
import type { JournalRecord } from "../../control/journal.js";
import type { FeedEvent } from "./shared-events.js";

/** One run of a request, and what its commit carries. */
export interface Attempt {
  events: FeedEvent[];
  journal: JournalRecord | undefined;
  touch: string | undefined;
  /** Parts this run may change, at the versions it found them (set once it holds the lock). */
  read: Map<string, number> | undefined;
  /** Every part may change (a control-plane write); else only those in `read`. */
  allParts: boolean;
  /** The part of the run's scenario, whose state its answer depends on. */
  scope: string | undefined;
  release: (() => void) | undefined;
  clearStore: boolean;
  /** The log line, told of the status the client finally got. */
  logged: ((unavailable: StateUnavailable | undefined) => void) | undefined;
}

/** A run about to start: nothing collected, no lock held. */
export function newAttempt(): Attempt {
  return {
    events: [],
    journal: undefined,
    touch: undefined,
    read: undefined,
    allParts: false,
    scope: undefined,
    release: undefined,
    clearStore: false,
    logged: undefined,
  };
}

/** What a store that failed answers the client: its own StateUnavailable, or one naming the store. */
export function asUnavailable(e: unknown, store: StateStore): StateUnavailable {
  if (e instanceof StateUnavailable) return e;
  return new StateUnavailable(`The shared state store (${store.shownAs}) did not answer: ${(e as Error)?.message ?? String(e)}. Retry later.`);
}
