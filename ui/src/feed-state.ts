/**
 * A session page's live state and its pure steps, kept out of the components so they can be
 * unit-tested: merging journal rows that arrive twice (the first load and the stream's replay
 * overlap on purpose, so no request falls in the gap between them), the timeline's marks from clock
 * and session events, and the reducer (`feedReducer`) that `useSessionFeed` folds its loads and
 * events into. The hook keeps the effects (requests, the stream, announcements) to itself.
 */
import { moveLabel } from "./format.js";
import { clockAt } from "./running-clock.js";
import type { ClockView, Finding, HistoryEntry, JournalEntry, SessionDetail } from "./types.js";
// A type-only import: nothing of the DOM-side api module that props.ts names is loaded.
import type { TimelineMark } from "./panels/props.js";

/** The rows plus the new ones, each id once, oldest first (by `seq`); the same array when nothing is new. */
export function mergeEntries(current: readonly JournalEntry[], incoming: readonly JournalEntry[]): readonly JournalEntry[] {
  const known = new Set(current.map((e) => e.id));
  const fresh = incoming.filter((e) => {
    if (known.has(e.id)) return false;
    known.add(e.id);
    return true;
  });
  if (fresh.length === 0) return current;
  const last = current[current.length - 1];
  // The usual case, one newer row, appends without sorting.
  const merged = [...current, ...fresh];
  return last !== undefined && fresh.length === 1 && fresh[0]!.seq > last.seq ? merged : merged.sort(bySeq);
}

function bySeq(a: JournalEntry, b: JournalEntry): number {
  return a.seq - b.seq;
}

/** The id the stream should replay after: the newest row's, or `req_0` (everything) when there is none yet. */
export function replayFrom(entries: readonly JournalEntry[]): string {
  return entries[entries.length - 1]?.id ?? "req_0";
}

/** The mark a clock event makes, compared with the clock before it; none when nothing visible changed. */
export function clockMark(before: ClockView | undefined, after: ClockView): TimelineMark | undefined {
  if (before === undefined) return undefined;
  const moved = Date.parse(after.now) - Date.parse(before.now);
  if (before.frozen !== after.frozen) return { kind: "clock", at: after.now, label: after.frozen ? "frozen" : "running" };
  // A running clock drifts between two readings; only a jump of a second or more is a move.
  if (Number.isNaN(moved) || Math.abs(moved) < 1000) return undefined;
  return { kind: "clock", at: after.now, label: moveLabel(moved) };
}

/**
 * The mark a session history entry makes (a clock move, actions or a reset, from this page, a script
 * or before the page was opened): a move at the clock's time after it, actions at the time they ran.
 */
export function historyMark(entry: HistoryEntry): TimelineMark {
  if (entry.kind === "reset") return { id: entry.id, kind: "clock", at: entry.clock.now, label: "reset" };
  if (entry.kind === "actions") {
    const now = Object.entries(entry.now ?? {}).map(([k, v]) => (v === true ? k : `${k}: ${v}`));
    const next = entry.next ? [`next ${entry.next.times}× ${entry.next.actions.join(", ")} (${entry.next.rule})`] : [];
    return { id: entry.id, kind: "actions", at: entry.sandboxTime, label: [...now, ...next].join(", ") || "actions" };
  }
  const moved = Date.parse(entry.clock.now) - Date.parse(entry.sandboxTime);
  const parts = Number.isNaN(moved) || Math.abs(moved) < 1000 ? [] : [moveLabel(moved)];
  if (entry.change?.freeze === true) parts.push("frozen");
  if (entry.change?.freeze === false) parts.push("running");
  return { id: entry.id, kind: "clock", at: entry.clock.now, label: parts.join(", ") || "clock set" };
}

/** The marks plus those of the entries not marked yet (by id), in the order they happened; the same array when none is new. */
export function mergeHistoryMarks(current: readonly TimelineMark[], entries: readonly HistoryEntry[]): readonly TimelineMark[] {
  const known = new Set(current.map((m) => m.id).filter((id) => id !== undefined));
  const fresh = entries.filter((e) => !known.has(e.id)).map(historyMark);
  return fresh.length === 0 ? current : [...current, ...fresh];
}

export type LiveState = "live" | "reconnecting" | "stopped";

/** What a session's page shows of it, as its loads and events have told it. */
export interface FeedState {
  detail: SessionDetail | undefined;
  /** Why the session could not be loaded (it does not exist, or the call was refused). */
  missing: string | undefined;
  entries: readonly JournalEntry[];
  findings: Finding[] | undefined;
  /** The clock shown: the last one heard, or one a panel set before its event arrived. */
  clock: ClockView | undefined;
  /**
   * The clock as the last event (or load) told it, and when (ms on this machine): clock moves are
   * measured from it, not from what a panel set a moment before, which would make every move look
   * like no move.
   */
  heard: { view: ClockView; at: number } | undefined;
  marks: readonly TimelineMark[];
  live: LiveState;
  ended: boolean;
  /** This page is ending the session, or has: its own "ended" event then says nothing, the page does. */
  endingHere: boolean;
  /** The session ended elsewhere (a script, another tab, idle reaping): the page says so. */
  endedElsewhere: boolean;
}

export type FeedAction =
  /** The session read (its detail, clock and history), on the page's load. */
  | { type: "loaded"; session: SessionDetail; at: number }
  /** The session could not be loaded: why. */
  | { type: "missing"; why: string }
  | { type: "detail"; detail: SessionDetail }
  | { type: "requests"; entries: readonly JournalEntry[] }
  | { type: "findings"; findings: Finding[] }
  /**
   * The clock as an event or a read told it, at `at` (ms on this machine). `mark`: only for the
   * sandbox clock's moves; the session's own moves, actions and resets are marked from its history.
   */
  | { type: "clock heard"; view: ClockView; at: number; mark: boolean }
  /** A panel changed the clock: shown at once, before its event arrives. */
  | { type: "clock shown"; view: ClockView }
  | { type: "history"; entries: readonly HistoryEntry[] }
  | { type: "live"; state: LiveState }
  | { type: "ending here"; on: boolean }
  /** The session ended; `say`: tell the user unless this page is the one ending it. */
  | { type: "ended"; say: boolean };

export const EMPTY_FEED: FeedState = {
  detail: undefined,
  missing: undefined,
  entries: [],
  findings: undefined,
  clock: undefined,
  heard: undefined,
  marks: [],
  live: "stopped",
  ended: false,
  endingHere: false,
  endedElsewhere: false,
};

/** The feed after one load or event; the same object when nothing changed, so the page does not re-render. */
export function feedReducer(state: FeedState, action: FeedAction): FeedState {
  switch (action.type) {
    case "loaded": {
      const heard = hearClock(state, { type: "clock heard", view: action.session.clock, at: action.at, mark: false });
      return { ...heard, detail: action.session, marks: mergeHistoryMarks(heard.marks, action.session.history) };
    }
    case "missing":
      return patch(state, { missing: action.why });
    case "detail":
      return patch(state, { detail: action.detail });
    case "requests":
      return patch(state, { entries: mergeEntries(state.entries, action.entries) });
    case "findings":
      return patch(state, { findings: action.findings });
    case "clock heard":
      return hearClock(state, action);
    case "clock shown":
      return patch(state, { clock: action.view });
    case "history":
      return patch(state, { marks: mergeHistoryMarks(state.marks, action.entries) });
    case "live":
      return patch(state, { live: action.state });
    case "ending here":
      return patch(state, { endingHere: action.on });
    case "ended":
      return patch(state, {
        ended: true,
        endingHere: true,
        endedElsewhere: state.endedElsewhere || (action.say && !state.endingHere),
      });
  }
}

/**
 * A clock heard: shown, kept as the one later moves are measured from, and marked when it moved.
 * A running clock's last reading is carried forward to now before comparing, or the time between
 * two readings would look like a move.
 */
function hearClock(state: FeedState, action: Extract<FeedAction, { type: "clock heard" }>): FeedState {
  const last = state.heard;
  const before = last && { ...last.view, now: clockAt(last.view, last.at, action.at) };
  const moved = action.mark ? clockMark(before, action.view) : undefined;
  return { ...state, clock: action.view, heard: { view: action.view, at: action.at }, marks: moved ? [...state.marks, moved] : state.marks };
}

/** The state with these fields changed, or the same state when each already holds its value. */
function patch(state: FeedState, changes: Partial<FeedState>): FeedState {
  const same = (Object.keys(changes) as (keyof FeedState)[]).every((k) => Object.is(state[k], changes[k]));
  return same ? state : { ...state, ...changes };
}
