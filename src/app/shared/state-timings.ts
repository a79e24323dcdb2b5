/** How long a store call may take before the request is answered 503 (the store's command timeout). */
export const STATE_TIMEOUT_MS = 2000;

/** The shared state's waits, shorter in tests (createSandbox's internal `stateTimings`). */
export interface StateTimings {
  /** How often a replica syncs with no request coming (an emptied store is noticed), and asks the store to end idle sessions. */
  readonly tickMs: number;
  /**
   * How long a state written back into an emptied store waits before it is answered from: longer
   * than a tick, so every running replica has offered its own by then.
   */
  readonly noticeMs: number;
  /** How long a replica asks the store whether a commit whose answer was lost applied (commitKnown); its default when left out. */
  readonly settleMs?: number;
}

export const DEFAULT_TIMINGS: StateTimings = { tickMs: 1000, noticeMs: 1500 };
