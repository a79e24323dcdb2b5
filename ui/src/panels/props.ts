import type { ControlApi } from "../api.js";
import type { ClockView, JournalEntry, SessionDetail } from "../types.js";

/** A moment on the session's clock the timeline marks: a clock move or actions run on the session. */
export interface TimelineMark {
  kind: "clock" | "actions";
  /** Session-clock time, ISO (for a clock move: the time after it). */
  at: string;
  /** What to show: "+61m", "revoke_tokens", … */
  label: string;
  /** The session history entry it shows (`req_N.M`), so an entry read twice (the page's load and the stream's replay) is marked once. */
  id?: string;
}

/** What every panel of a session's page gets from the page. */
export interface SessionPanelProps {
  api: ControlApi;
  session: SessionDetail;
  /** Says a result or a refusal in the page's status line (role=status, read by screen readers). */
  announce: (message: string, kind?: "ok" | "error") => void;
  /** Says why a call failed; when it lacked the admin token, the page also asks for one. */
  fail: (error: unknown) => void;
}

export interface TimelineProps {
  entries: readonly JournalEntry[];
  marks: readonly TimelineMark[];
  /** The session clock now (the timeline's right edge). */
  now: string;
  /** A mark was chosen: the page scrolls the journal to that row. */
  onSelect?: (requestId: string) => void;
}

export interface ClockPanelProps extends SessionPanelProps {
  clock: ClockView;
  onClock: (clock: ClockView) => void;
}

export interface BreakItNowProps extends SessionPanelProps {
  /** The operation's answer after a run (its state, pending rules), e.g. to reload the session after a new api_secret. */
  onRan?: (answer: unknown) => void;
}
