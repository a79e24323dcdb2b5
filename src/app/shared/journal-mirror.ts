import type { FeedEntry, StateStore } from "../../core/state-store.js";
import { type Journal, type JournalRecord, usesItsSession } from "../../control/journal.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SharedEventHub } from "./shared-events.js";

/**
 * A replica's journal as a mirror of the store's: loaded whole at start, then fed in commit order
 * from the store's feed (every replica's requests, this one's included), and loaded whole again
 * when the feed shows entries were missed or the store lost its data.
 */
export class JournalMirror {
  /** Feed entries that came during a reload; undefined when none is under way. */
  private held: FeedEntry[] | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly journal: Journal,
    private readonly hub: SharedEventHub,
    private readonly sessions: SessionStore,
  ) {}

  /** The journal as the store keeps it, numbers included (at start, after a gap or a lost store). */
  async reload(): Promise<void> {
    if (this.held) return;
    // What the feed brings while the store's journal is on its way is held, then added after it:
    // an entry committed after the store read its journal is in the feed only.
    const held: FeedEntry[] = [];
    this.held = held;
    try {
      const rows = await this.store.journal();
      this.journal.restart();
      for (const { seq, json } of rows) this.journal.add(JSON.parse(json) as JournalRecord, seq);
    } finally {
      this.held = undefined;
      if (held.length > 0) this.fromFeed(held);
    }
  }

  fromFeed(entries: readonly FeedEntry[]): void {
    if (this.held) {
      this.held.push(...entries);
      return;
    }
    const gap = this.hub.fromFeedEntries(entries, this.journal, (r) => this.usedBy(r));
    // The feed moved past entries this replica never got (it was cut off longer than the feed
    // keeps, or the store lost its data): the journal is read again whole.
    if (gap) void this.reload().catch(() => {});
  }

  /**
   * A journaled request of a session's own client, answered by any replica, is its use here too:
   * the session's `expires_at` is the same on every replica (the store reaps by the same uses).
   */
  private usedBy(record: JournalRecord): void {
    if (record.session !== undefined && usesItsSession(record)) this.sessions.touch(record.session, record.timeMs);
  }
}
