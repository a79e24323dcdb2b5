import { SESSION_ID_PATTERN, sessionBasePath } from "../core/session-path.js";

/**
 * An adapter's `session` option (msw.ts, express.ts): every request it hands over is then that
 * session's, as if sent under its base URL `/s/<id>`, except the control plane (`/__sandbox/`),
 * which stays at the root. Checked once, when the adapter is made; the returned function maps each
 * request's path.
 */
export function sessionMount(session: string | undefined): (path: string) => string {
  if (session === undefined) return (path) => path;
  if (!SESSION_ID_PATTERN.test(session)) {
    throw new TypeError(
      `session '${String(session).slice(0, 64)}' is not a session id: pass the id of sandbox.sessions.create(), e.g. 'ses_0123456789abcdef'`,
    );
  }
  const base = sessionBasePath(session);
  return (path) => (path.startsWith("/__sandbox/") ? path : base + path);
}
