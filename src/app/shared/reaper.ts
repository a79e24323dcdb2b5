import type { StateStore } from "../../core/state-store.js";
import type { SessionStore } from "../../control/sessions.js";
import { newAttempt } from "./attempt.js";
import { sessionOfPart, sessionPart } from "./part-names.js";
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
    private readonly deps: {
      readonly store: StateStore;
      readonly runs: Runs;
      readonly sessions: SessionStore;
      readonly parts: StoredParts;
      /** Sessions unused this long are ended. */
      readonly idleMs: number;
      /** Commits the events of the sessions ended. */
      readonly commitEvents: (events: string[]) => Promise<unknown>;
    },
  ) {}

  async reap(): Promise<void> {
    if (this.reaping) return;
    this.reaping = true;
    const { store, runs, sessions, parts, idleMs, commitEvents } = this.deps;
    try {
      const ended = await store.reap(Date.now() - idleMs, REAP_LIMIT);
      const ids = ended.flatMap((part) => sessionOfPart(part) ?? []);
      if (ids.length === 0) return;
      // Under the lock, as a run of its own: the streams' "ended" events go with its commit.
      const run = newAttempt({ basis: "", missedAtStart: 0, behindAtStart: 0, undoneAtStart: 0, lockTurnsAtStart: 0 });
      run.release = await runs.acquire();
      runs.hold(run);
      try {
        for (const id of ids) sessions.endReaped(id);
        for (const id of ids) parts.forget(sessionPart(id));
        await commitEvents(run.events.map((e) => JSON.stringify(e)));
      } finally {
        runs.release(run);
      }
    } catch {
      // The store is away: the next round tries again.
    } finally {
      this.reaping = false;
    }
  }
}
