import { SESSION_ID_PATTERN, SESSION_URL_PREFIX, splitSessionPath } from "../core/session-path.js";
import { MERCHANT_ROUTE_TABLE } from "../endpoints/merchant-routes.js";

/**
 * Whether a path is one the sandbox answers as its own: a merchant API route, the control plane, or
 * anything under a session's base URL. An adapter mounted inside someone else's app (express) hands
 * every other path back to the app, so the app's own routes keep working beside the sandbox.
 */
const EXACT = new Set(MERCHANT_ROUTE_TABLE.filter((r) => !r.groupPrefix).map((r) => r.path));
const GROUPS = MERCHANT_ROUTE_TABLE.flatMap((r) => (r.groupPrefix ? [r.groupPrefix] : []));

export function isSandboxPath(path: string): boolean {
  // One trailing slash too many is still the sandbox's route: its 404 names the path meant.
  const exact = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  if (EXACT.has(exact) || path.startsWith("/__sandbox/") || path === "/__sandbox") return true;
  if (GROUPS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return true;
  // A session's base URL: every path under it is the session's (its 404s feed the session's report).
  return path.startsWith(SESSION_URL_PREFIX) && SESSION_ID_PATTERN.test(splitSessionPath(path).id);
}
