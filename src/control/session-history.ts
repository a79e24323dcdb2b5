import { redactValue } from "../core/redact.js";
import type { SecretView } from "../core/secret-index.js";
import type { HistoryEntry } from "./session-info.js";

/**
 * A session's history: what was done to it through the control plane (clock moves, actions,
 * resets), kept as plain data on the session so the QA page can mark what happened before it was
 * opened, and the event replay can send it in order with the requests.
 */
export interface SessionHistory {
  /** Oldest first, at most SESSION_HISTORY_MAX. */
  entries: HistoryEntry[];
  /** How many older entries were dropped to keep that bound. */
  dropped: number;
}

/** Entries a session keeps; the oldest is dropped for a new one (and counted in `dropped`). */
export const SESSION_HISTORY_MAX = 100;
/** The most characters an echoed value keeps (after the redaction: a cut secret is not found). */
export const HISTORY_VALUE_CAP = 64;

export function emptyHistory(): SessionHistory {
  return { entries: [], dropped: 0 };
}

export function addToHistory(history: SessionHistory, entry: HistoryEntry, max = SESSION_HISTORY_MAX): void {
  history.entries.push(entry);
  while (history.entries.length > max) {
    history.entries.shift();
    history.dropped++;
  }
}

/** A value a caller sent, as an entry may show it: scalars kept, text redacted and cut, anything else as its redacted JSON. */
export function echoValue(value: unknown, secrets: SecretView): string | number | boolean | null {
  if (typeof value === "number" || typeof value === "boolean" || value === null) return value;
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const shown = redactValue(text, secrets);
  return shown.length <= HISTORY_VALUE_CAP ? shown : `${shown.slice(0, HISTORY_VALUE_CAP)}…`;
}

/** Where an event stands in the stream: requests at (n, 0), an entry `req_<n>.<m>` at (n, m). */
export type StreamPosition = readonly [number, number];

/** `req_12` or `req_12.3` as a position; undefined for anything else. */
export function streamPosition(id: string): StreamPosition | undefined {
  const m = /^req_(\d{1,15})(?:\.(\d{1,15}))?$/.exec(id);
  return m ? [Number(m[1]), m[2] === undefined ? 0 : Number(m[2])] : undefined;
}

export function isAfter(a: StreamPosition, b: StreamPosition): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

/** The entries after a position, oldest first. */
export function historyAfter(history: SessionHistory, from: StreamPosition): HistoryEntry[] {
  return history.entries.filter((e) => isAfter(streamPosition(e.id)!, from));
}
