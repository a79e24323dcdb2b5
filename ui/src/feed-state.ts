/**
 * Pure steps of a session page's live state, kept out of the components so they can be unit-tested:
 * merging journal rows that arrive twice (the first load and the stream's replay overlap on purpose,
 * so no request falls in the gap between them), and the timeline's marks from clock and session events.
 */
import { moveLabel } from "./format.js";
import type { ClockView, HistoryEntry, JournalEntry } from "./types.js";
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
