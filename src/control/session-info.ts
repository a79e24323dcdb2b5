/**
 * What the control plane says of a session: its answer with the credentials, and the event stream's
 * changes without them. A file that imports nothing, so the QA page and the tests take these types
 * from here (type-only) instead of keeping copies.
 */

/** What POST /__sandbox/sessions answers: everything a test needs to configure its integration. */
export interface SessionInfo {
  id: string;
  scenario: string;
  merchant: { id: string; api_key: string; api_secret: string; payment_token: string; login: { email: string; password: string } };
  merchants: Array<SessionInfo["merchant"]>;
  /** `http://<Host of the request>/s/<id>`: every merchant API path under it is this session's. */
  base_url: string;
  expires_at: string;
}

/** What the event stream says of a session: never its credentials. */
export interface SessionChange {
  change: "created" | "reset" | "ended" | "actions";
  id: string;
  scenario: string;
  /** The actions run on it (`POST …/actions`): their names, never their values (a rotated secret). */
  applied?: string[];
  /** The `next` rule those actions added, by the name the journal gives it. */
  rule?: string;
  /** Why it ended: DELETE (or a sandbox reset), or idle past its limit. */
  reason?: "deleted" | "reaped";
}

/**
 * One thing done to a session through the control plane (`GET /__sandbox/sessions/{id}` lists them
 * as `history`; the event stream sends each as a `history` event). Plain JSON, no functions: the
 * session owns it as data, so a store other than memory can keep it. Never a secret: every value
 * it echoes went through the redaction.
 */
export interface HistoryEntry {
  /**
   * `req_<n>.<m>`: done after the journal's request `req_<n>`, the sandbox's m-th entry. Its event id:
   * `since` / Last-Event-ID take it, and the replay sends requests and entries in this order.
   */
  id: string;
  session: string;
  /** Wall-clock time it was done. */
  time: string;
  /** The session clock when it was done (before any move it made). */
  sandboxTime: string;
  kind: "clock" | "actions" | "reset";
  /** A clock move: what was asked (`advance`, `set`, `freeze`), as sent. */
  change?: { advance?: string | number; set?: string; freeze?: boolean };
  /** Actions: the merchants they acted on. */
  merchants?: string[];
  /** Actions: the `now` actions with their values (each redacted, cut at 64 characters). */
  now?: Record<string, string | number | boolean | null>;
  /** Actions: the `next` rule added: its name, endpoint, times and the names of its actions (never their values). */
  next?: { rule: string; endpoint: string | string[]; times: number; actions: string[] };
  /** The session clock after it. */
  clock: { now: string; frozen: boolean };
}
