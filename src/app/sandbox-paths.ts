import { SESSION_ID_PATTERN, SESSION_URL_PREFIX, splitSessionPath } from "../core/session-path.js";
import { MERCHANT_ROUTE_TABLE, type MerchantRoute } from "../endpoints/merchant-routes.js";

/**
 * Whether a path is one the sandbox answers as its own: a route of `table`, the control plane, or
 * anything under a session's base URL. An adapter mounted inside someone else's app (express) hands
 * every other path back to the app, so the app's own routes keep working beside the sandbox.
 */
export function sandboxPathsOf(table: readonly MerchantRoute[]): (path: string) => boolean {
  const exactPaths = new Set(table.filter((r) => !r.groupPrefix).map((r) => r.path));
  const groups = table.flatMap((r) => (r.groupPrefix ? [r.groupPrefix] : []));
  return (path) => {
    // One trailing slash too many is still the sandbox's route: its 404 names the path meant.
    const exact = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    if (exactPaths.has(exact) || path.startsWith("/__sandbox/") || path === "/__sandbox") return true;
    if (groups.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return true;
    // A session's base URL: every path under it is the session's (its 404s feed the session's report).
    return path.startsWith(SESSION_URL_PREFIX) && SESSION_ID_PATTERN.test(splitSessionPath(path).id);
  };
}

/** The sandbox's own paths, of its route table. */
export const isSandboxPath: (path: string) => boolean = sandboxPathsOf(MERCHANT_ROUTE_TABLE);
