import { EventHub, type EventHubLimits, type EventKind } from "../../control/events.js";
import type { Journal, JournalRecord } from "../../control/journal.js";
import { analyze } from "../../control/report.js";

/** What a request's changes tell the streams of every replica, kept with its commit. */
export interface FeedEvent {
  kind: EventKind | "reset";
  id: string;
  data: unknown;
  session: string | undefined;
}

/**
 * The event hub of a replica that shares its state. Clock moves, session changes and history
 * entries made by a request go into that request's commit (`collect`), and every replica's
 * streams get them from the store's feed (`fromFeed`), in commit order, this replica's own
 * included: a page watching one replica sees what another did, once. Requests and findings are
 * made from the feed's journal records on each replica, as in memory.
 */
export class SharedEventHub extends EventHub {
  constructor(
    limits: EventHubLimits,
    /** The request whose commit collects events; undefined outside one (applying a sync). */
    private readonly collect: () => FeedEvent[] | undefined,
  ) {
    super(limits);
  }

  /** Within a request, events are always collected: another replica's streams may want them. */
  override get active(): boolean {
    return this.collect() !== undefined || super.active;
  }

  override publish(kind: EventKind, id: string, data: unknown, session: string | undefined): void {
    if (kind === "request" || kind === "findings" || kind === "overflow") {
      super.publish(kind, id, data, session);
      return;
    }
    // Outside a request (a sync applying another replica's change) nothing is collected: that
    // replica's commit carries the event.
    this.collect()?.push({ kind, id, data, session });
  }

  /** Streams of an ended session end when the feed says so, on every replica. */
  override closeSession(_session: string): void {}

  /**
   * The store's feed, in commit order: a journal record joins this replica's journal (the store's
   * number kept; one already there is skipped) and goes to the streams; an event goes to the streams;
   * a reset empties the journal. True when records were missed (a gap in the numbers).
   */
  fromFeedEntries(
    entries: ReadonlyArray<{ seq: number | undefined; json: string }>,
    journal: Journal,
    journaled: (record: JournalRecord) => void,
  ): boolean {
    let gap = false;
    for (const entry of entries) {
      if (entry.seq !== undefined) {
        // A number past the next one: entries in between never came (true: the journal needs reading again).
        if (entry.seq > journal.nextSeq) gap = true;
        const before = journal.lastId();
        const record = JSON.parse(entry.json) as JournalRecord;
        journal.add(record, entry.seq);
        if (journal.lastId() === before) continue;
        this.fromJournal(journal);
        journaled(record);
        continue;
      }
      const event = JSON.parse(entry.json) as FeedEvent;
      if (event.kind === "reset") journal.clear();
      else this.fromFeed(event);
    }
    return gap;
  }

  /** An event from the store's feed, for this replica's streams. */
  fromFeed(event: FeedEvent): void {
    if (event.kind === "reset") return;
    super.publish(event.kind, event.id, event.data, event.session);
    const change = event.data as { change?: string } | undefined;
    if (event.kind === "session" && change?.change === "ended" && event.session !== undefined) super.closeSession(event.session);
  }

  /** The entry the feed just added to the journal, and its session's findings when they changed. */
  fromJournal(journal: Journal): void {
    if (!super.active) return;
    const entry = journal.latest();
    if (!entry) return;
    super.publish("request", entry.id, entry, entry.session);
    const session = entry.session;
    if (session !== undefined && this.watches(session)) {
      this.findingsChanged(session, () => ({ id: journal.lastId(), findings: analyze(journal.list({ session })) }));
    }
  }
}
