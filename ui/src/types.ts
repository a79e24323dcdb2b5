/**
 * The control plane's answers as the page reads them: the shapes /__sandbox/openapi.json
 * documents (only the members the page uses).
 */
export interface ScenarioSummary {
  name: string;
  description: string;
  /** "library" (shipped with the sandbox) or "loaded" (given to `serve --scenario`). */
  source: "library" | "loaded";
  /** One line per rule: what it scripts, e.g. "payment, cashout · 4th call → expire_token: presented". */
  rules: Array<{ name: string; summary: string }>;
}

// The session answer and its changes are the server's own types (type-only, erased from the bundle).
import type { SessionInfo } from "../../src/control/session-info.js";
export type { HistoryEntry, SessionChange } from "../../src/control/session-info.js";
import type { HistoryEntry } from "../../src/control/session-info.js";
export type SessionAnswer = SessionInfo;
export type SessionMerchant = SessionInfo["merchant"];

export interface ClockView {
  now: string;
  frozen: boolean;
}

export interface SessionDetail extends SessionAnswer {
  state: Record<string, unknown>;
  clock: ClockView;
  /** What was done to the session through the control plane, oldest first (its last 100). */
  history: HistoryEntry[];
  history_dropped: number;
}

export interface SessionListItem {
  id: string;
  scenario: string;
  base_url: string;
  expires_at: string;
}

// The journal entry and the finding are the server's own types (type-only imports of files that
// import nothing, erased from the bundle): a field the sandbox adds or renames breaks the page's
// type-check instead of its display.
export type { JournalEntry } from "../../src/control/journal.js";
export type { Finding } from "../../src/control/findings/finding.js";

export interface MintAnswer {
  token: string;
  variant: string;
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  expected_error: string | null;
}
