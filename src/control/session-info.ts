/**
 * What the control plane says of a session: its answer with the credentials, and the event stream's
 * changes without them. A file that imports nothing, so the QA page and the tests take these types
 * from here (type-only) instead of keeping copies.
 */

/** What POST /__sandbox/sessions answers: everything a test needs to configure its integration. */
export interface SessionInfo {
  id: string;
  scenario: string;
  /**
   * The response profile its merchant API answers in: the one POST /__sandbox/sessions asked for,
   * else the scenario's, else the sandbox's (`oauth` unless `serve --profile` chose another).
   */
  profile: string;
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
