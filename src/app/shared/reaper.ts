import type { StateStore } from "../../core/state-store.js";
import type { SessionStore } from "../../control/sessions.js";
import { newAttempt } from "./attempt.js";
import { sessionOfPart, sessionPart } from "./parts.js";
import type { Runs } from "./runs.js";
import type { StoredParts } from "./stored-parts.js";

/** Sessions ended by one reap, at most. */
const REAP_LIMIT = 100;

/**
 * Ends the sessions no replica used within the idle limit: the store picks and removes them (it
 * alone knows every replica's uses), this replica ends them, and their "ended" events go to every
 * replica's streams with a commit of their own.
 */
export class Reaper {
  private reaping = false;

  constructor(
    private readonly store: StateStore,
    private readonly runs: Runs,
    private readonly sessions: SessionStore,
    private readonly parts: StoredParts,
    private readonly idleMs: number,
    /** Commits the events of the sessions ended. */
    private readonly commitEvents: (events: string[]) => Promise<unknown>,
  ) {}

  async reap(): Promise<void> {
    if (this.reaping) return;
    this.reaping = true;
    try {
      const ended = await this.store.reap(Date.now() - this.idleMs, REAP_LIMIT);
      const ids = ended.flatMap((part) => sessionOfPart(part) ?? []);
      if (ids.length === 0) return;
      // Under the lock, as a run of its own: the streams' "ended" events go with its commit.
      const run = newAttempt();
      run.release = await this.runs.acquire();
      this.runs.hold(run);
      try {
        for (const id of ids) this.sessions.endReaped(id);
        for (const id of ids) this.parts.forget(sessionPart(id));
        await this.commitEvents(run.events.map((e) => JSON.stringify(e)));
      } finally {
        this.runs.release(run);
      }
    } catch {
      // The store is away: the next round tries again.
    } finally {
      this.reaping = false;
    }
  }
}
