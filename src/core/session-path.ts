/**
 * The paths of sessions' base URLs, known to the pipeline, the control plane and the msw adapter.
 */

/**
 * A session's base URL: `/s/{session_id}` in front of any path of the merchant API, so a test
 * configures its integration with one URL and every request under it lands in that session's
 * journal and report, whatever its credentials (none, in the query, another session's). `/s/`
 * collides with no path of the merchant API (they start with /api/ or /.well-known/) nor with the
 * control plane (/__sandbox/).
 */
export const SESSION_URL_PREFIX = "/s/";

/** The path of a session's base URL. */
export function sessionBasePath(id: string): string {
  return `${SESSION_URL_PREFIX}${id}`;
}

/** The session id of a path under the prefix, and the path under the base URL (`/` when nothing follows). */
export function splitSessionPath(path: string): { id: string; rest: string } {
  const end = path.indexOf("/", SESSION_URL_PREFIX.length);
  return end < 0
    ? { id: path.slice(SESSION_URL_PREFIX.length), rest: "/" }
    : { id: path.slice(SESSION_URL_PREFIX.length, end), rest: path.slice(end) };
}

/** What a session id looks like (`sessions.create()` makes `ses_` and 16 hex digits). */
export const SESSION_ID_PATTERN = /^ses_[0-9a-f]{16}$/;
