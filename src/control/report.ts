import type { JournalEntry } from "./journal.js";

/**
 * The integration report: what the integration did wrong, read from the journal. Each finding has
 * a stable code, a severity (`error` fails a CI gate), a message that says how to fix it, and the
 * ids of the requests that show it.
 */
export interface Finding {
  code: string;
  severity: "error" | "warning" | "info";
  message: string;
  evidence: string[];
}

export function analyze(entries: readonly JournalEntry[]): Finding[] {
  void entries;
  return [];
}
