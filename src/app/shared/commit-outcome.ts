import { StateUnavailable, TooManySessions } from "../../core/errors.js";
import { COMMIT_OUTCOME_KEPT_MS, type CommitRequest, type CommitResult, type StateStore } from "../../core/state-store.js";
import { STATE_TIMEOUT_MS } from "./state-timings.js";

/**
 * How long a replica tries to learn the outcome of a commit whose answer was lost, before it
 * answers 503 not knowing: all of it within the time the store keeps the outcome, counted from
 * the commit's send (its answer was awaited STATE_TIMEOUT_MS first), with a timeout to spare.
 */
const SETTLE_MS = COMMIT_OUTCOME_KEPT_MS - 2 * STATE_TIMEOUT_MS;
/** Between two tries of settling while the store is not reachable. */
const SETTLE_RETRY_MS = 100;

/**
 * What a client is told when the store did not say, within SETTLE_MS, whether its request's
 * changes were stored: the one answer that cannot promise either.
 */
const UNKNOWN_DETAIL =
  "The sandbox's shared state stopped answering while this request's changes were being stored, and whether they were is not known. Read the state (the journal, the session) before you retry.";

/**
 * A commit's outcome, known: its answer, or, when the answer was lost (a timeout, a connection
 * dropped with it in flight), what `settle` finds: applied, or not and now never (answered as a
 * late commit). Throws the unknown-outcome StateUnavailable when the store answers neither within
 * SETTLE_MS, and the store's StateUnavailable when the commit was refused before it was sent.
 */
export async function commitKnown(store: StateStore, request: CommitRequest, settleMs = SETTLE_MS): Promise<CommitResult> {
  try {
    return await store.commit(request);
  } catch (e) {
    if (!(e instanceof StateUnavailable) || e.unsent) throw e;
  }
  const until = Date.now() + settleMs;
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) throw new StateUnavailable(UNKNOWN_DETAIL);
    try {
      const settled = await store.settle(request.id, left);
      return settled.applied ? { ok: true, seq: settled.seq, position: settled.position } : { ok: false, reason: "late" };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, Math.min(SETTLE_RETRY_MS, Math.max(0, until - Date.now()))));
    }
  }
}

/** The refusal commitKnown throws when the outcome stayed unknown (told to the client as it is). */
export function isUnknownOutcome(e: unknown): e is StateUnavailable {
  return e instanceof StateUnavailable && e.description === UNKNOWN_DETAIL;
}

/** A session refused by the store: the deployment holds `max` live sessions already. */
export function tooManySessions(max: number): TooManySessions {
  return new TooManySessions(
    `This sandbox already holds ${max} sessions across its replicas. DELETE /__sandbox/sessions/{id} when a test is done, or wait for idle sessions to be reaped.`,
  );
}
