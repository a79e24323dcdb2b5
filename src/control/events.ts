import type { ResponseStream, StreamSink } from "../core/http-types.js";
import { TooManySubscribers } from "../core/errors.js";

/**
 * The control plane's event hub (GET /__sandbox/events): one per sandbox, made by the wiring. It
 * holds the open streams and hands each the events it asked for. Bounded twice: at most
 * `maxSubscribers` streams, and a stream whose client has fallen `bufferSize` events behind is sent
 * a last `overflow` event and closed. Closing, rather than dropping the oldest events, because a
 * client that missed events cannot know which ones from a count; closed, it reconnects with
 * Last-Event-ID and the journal replays exactly what it missed.
 * With no stream open, `active` is false and the pipeline builds nothing for it.
 */
export type EventKind = "request" | "findings" | "clock" | "session" | "history" | "overflow";

export interface EventHubLimits {
  /** Open streams at most; one more is refused 429 `too_many_subscribers`. */
  maxSubscribers: number;
  /** Events a stream may have waiting for its client before it is closed with `overflow`. */
  bufferSize: number;
  /** How often a comment line keeps idle streams open through proxies (ms); 0 sends none. */
  heartbeatMs: number;
  /**
   * A watched session's findings are worked out at most once per this many ms, this long after the
   * first request since they last were (default 200), even under constant load. Working them out
   * reads the session's whole journal: once per request, an open QA page made each of that
   * session's requests many times dearer (docs/performance.md#the-request-log-and-the-event-streams).
   */
  findingsDelayMs?: number;
}

export const EVENT_LIMIT_DEFAULTS: Required<EventHubLimits> = { maxSubscribers: 32, bufferSize: 256, heartbeatMs: 15_000, findingsDelayMs: 200 };

/** A session's findings as they stand, with the id of the last request journaled (the event's id). */
export type FindingsSnapshot = () => { id: string; findings: unknown };

interface Subscriber {
  /** Only this session's events; undefined: every event. */
  session: string | undefined;
  sink: StreamSink | undefined;
  /** Frames made before the adapter opened the stream. */
  early: string[];
  /** The opening and the replay, plus as many live frames as the buffer holds. */
  earlyLimit: number;
  closed: boolean;
}

/** The last event of a stream that fell too far behind. */
function overflowFrame(bufferSize: number): string {
  return eventFrame("overflow", "", {
    reason: `more than ${bufferSize} events were waiting for this client; reconnect with Last-Event-ID to replay the requests missed`,
  });
}

/** The first chunk of every stream, a comment line. */
const OPENING = ": merchant-sandbox events\n\n";

export class EventHub {
  private readonly subscribers = new Set<Subscriber>();
  /** The findings each watched session was last sent, as JSON: a request sends them only when they change. */
  private readonly lastFindings = new Map<string, string>();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  /** Sessions whose requests came since their findings were last worked out, with how to work them out. */
  private readonly findingsDue = new Map<string, FindingsSnapshot>();
  private findingsTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly limits: EventHubLimits) {}

  /** Any stream open: the one test the request path makes. */
  get active(): boolean {
    return this.subscribers.size > 0;
  }

  get size(): number {
    return this.subscribers.size;
  }

  /**
   * A stream of this very session is open: its findings are worth computing (a stream of everything
   * alone does not make every session's report run on every request; it gets them when computed).
   */
  watches(session: string): boolean {
    for (const s of this.subscribers) if (s.session === session) return true;
    return false;
  }

  /** How many journal entries to hand `subscribe` as its replay: one more than it sends, to know there were more. */
  get replayLimit(): number {
    return this.limits.bufferSize + 1;
  }

  /**
   * A new stream: takes its place at once (so the limit holds before the adapter opens it), starts
   * with `replay` (frames from the journal), then goes live. Throws TooManySubscribers when full.
   * The replay counts against the buffer: more than `bufferSize` frames to replay, and the stream
   * sends that many, then `overflow`, and ends; the client reconnects with the last id it got and
   * is sent the next ones. A client that never reads holds one buffer's worth, not the journal.
   */
  subscribe(session: string | undefined, replay: string[]): ResponseStream {
    if (this.subscribers.size >= this.limits.maxSubscribers) {
      throw new TooManySubscribers(
        `This sandbox already streams events to ${this.limits.maxSubscribers} clients. Close a stream you no longer read, or raise maxEventSubscribers (--max-event-subscribers).`,
      );
    }
    const { bufferSize } = this.limits;
    // A comment first: clients and proxies get the first chunk at once, not at the first heartbeat.
    const early = [OPENING, ...replay.slice(0, bufferSize)];
    const sub: Subscriber = { session, sink: undefined, early, earlyLimit: early.length + bufferSize, closed: false };
    if (replay.length > bufferSize) {
      // Never takes a place: opened, it writes this page of the replay and the overflow, and ends.
      sub.closed = true;
      early.push(overflowFrame(bufferSize));
      return { open: (sink) => this.open(sub, sink), cancel: () => {} };
    }
    this.subscribers.add(sub);
    this.startHeartbeat();
    return { open: (sink) => this.open(sub, sink), cancel: () => this.remove(sub) };
  }

  private open(sub: Subscriber, sink: StreamSink): () => void {
    if (sub.closed) {
      // Overflowed before it opened: what was kept, the overflow event, and the end.
      for (const frame of sub.early.splice(0)) sink.write(frame);
      sink.end();
      return () => {};
    }
    sub.sink = sink;
    // At most the opening, a buffer's worth of replay and a buffer's worth of live events.
    for (const frame of sub.early.splice(0)) sink.write(frame);
    return () => this.remove(sub);
  }

  /** Sends one event to every stream that wants it: `session` undefined is sandbox-wide (every stream). */
  publish(kind: EventKind, id: string, data: unknown, session: string | undefined): void {
    if (this.subscribers.size === 0) return;
    const frame = eventFrame(kind, id, data);
    for (const sub of this.subscribers) {
      if (session !== undefined && sub.session !== undefined && sub.session !== session) continue;
      if (session === undefined && kind === "request" && sub.session !== undefined) continue;
      this.deliver(sub, frame);
    }
  }

  /**
   * A request of a watched session came: its findings are worked out `findingsDelayMs` later (so at
   * most that often, however many requests come), off the request's own path, and sent if they changed.
   */
  findingsChanged(session: string, snapshot: FindingsSnapshot): void {
    this.findingsDue.set(session, snapshot);
    if (this.findingsTimer) return;
    this.findingsTimer = setTimeout(() => this.flushFindings(), this.limits.findingsDelayMs ?? EVENT_LIMIT_DEFAULTS.findingsDelayMs);
    // Like the heartbeat: a library user's process may exit with findings still due.
    this.findingsTimer.unref?.();
  }

  private flushFindings(): void {
    this.findingsTimer = undefined;
    const due = [...this.findingsDue];
    this.findingsDue.clear();
    for (const [session, snapshot] of due) {
      if (!this.watches(session)) continue;
      const { id, findings } = snapshot();
      this.findings(session, id, findings);
    }
  }

  /** The session's findings, sent only when they differ from what its streams last got. */
  findings(session: string, id: string, findings: unknown): void {
    const json = JSON.stringify(findings);
    if (this.lastFindings.get(session) === json) return;
    this.lastFindings.set(session, json);
    this.publish("findings", id, { session, findings }, session);
  }

  /** What a new stream's findings are compared with (the session's findings when it opened). */
  baseline(session: string, findings: unknown): void {
    this.lastFindings.set(session, JSON.stringify(findings));
  }

  /** Ends the streams of a session that ended: nothing more can come, and their places free up. */
  closeSession(session: string): void {
    for (const sub of [...this.subscribers]) {
      if (sub.session !== session) continue;
      this.remove(sub);
      sub.sink?.end();
    }
  }

  /** Ends every stream (the sandbox closes): their clients see the answer end. */
  closeAll(): void {
    for (const sub of [...this.subscribers]) {
      this.remove(sub);
      sub.sink?.end();
    }
  }

  private deliver(sub: Subscriber, frame: string): void {
    if (sub.closed) return;
    if (!sub.sink) {
      // Not open yet (the adapter has not started writing): bounded like the live buffer.
      if (sub.early.length < sub.earlyLimit) sub.early.push(frame);
      else {
        this.remove(sub);
        sub.early.push(overflowFrame(this.limits.bufferSize));
      }
      return;
    }
    if (sub.sink.pending() >= this.limits.bufferSize) {
      const sink = sub.sink;
      this.remove(sub);
      sink.write(overflowFrame(this.limits.bufferSize));
      sink.end();
      return;
    }
    sub.sink.write(frame);
  }

  private remove(sub: Subscriber): void {
    if (sub.closed) return;
    sub.closed = true;
    this.subscribers.delete(sub);
    if (sub.session !== undefined && !this.watches(sub.session)) {
      this.lastFindings.delete(sub.session);
      this.findingsDue.delete(sub.session);
    }
    if (this.subscribers.size === 0) {
      this.stopHeartbeat();
      if (this.findingsTimer) clearTimeout(this.findingsTimer);
      this.findingsTimer = undefined;
      this.findingsDue.clear();
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeat || this.limits.heartbeatMs <= 0) return;
    this.heartbeat = setInterval(() => {
      // A client that stopped reading gets no more: its buffer must not grow in a quiet sandbox.
      for (const sub of this.subscribers) if (sub.sink && sub.sink.pending() < this.limits.bufferSize) sub.sink.write(": keep-alive\n\n");
    }, this.limits.heartbeatMs);
    // The timer alone must not keep a library user's process alive.
    this.heartbeat.unref?.();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

/** One Server-Sent Event. JSON has no raw newline, so `data` is one line. */
export function eventFrame(kind: EventKind, id: string, data: unknown): string {
  return `event: ${kind}\n${id ? `id: ${id}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
}
