import { MERCHANT_ROUTE_TABLE, type MerchantRoute } from "./merchant-routes.js";

/**
 * The merchant API's paths as a client sees them, and the one guess at which of them a mistyped
 * path meant, both made from the route table. The 404 answer (not-found.ts) and the report's
 * `wrong_base_path` finding both use it, so what the client is told at the call and in the report
 * always agree, and a route added to the table is in both.
 */
export interface ApiPaths {
  /** What the merchant API serves, in the table's order: `POST /api/v2/auth/token`, `ANY /api/v2/payment/*`, … */
  readonly routes: readonly string[];
  /**
   * The API path a client most likely meant by `path`, or undefined when no path fits (or `path` is
   * already that path). What a wrong base URL does to a path is dropped: a version other than v2
   * (`/api/v1/auth/token`), a doubled prefix (`/api/v2/api/v2/payment/x`), a missing `/api`
   * (`/v2/auth/token`), a path of its own (`/merchant/api/v2/auth/token`), trailing or doubled
   * slashes, upper case; and a route's aliases (`/oauth/token`, `/jwks.json`) are mapped to it.
   * Pure, and only as safe to echo as `path` is: pass the redacted path.
   */
  correct(path: string): string | undefined;
}

/** The control plane's one path a client of the API may mean: its health check. */
const CONTROL_ENDINGS: ReadonlyArray<[string, string]> = [["__sandbox/health", "/__sandbox/health"]];

/** The API's paths and corrections of a route table (the sandbox's is MERCHANT_ROUTE_TABLE: API_PATHS below). */
export function apiPaths(table: readonly MerchantRoute[]): ApiPaths {
  // Exact endings (lower case, from a segment that names a resource) and the path they meant; and the
  // protected groups, whose rest is kept as sent (ids are case-sensitive).
  const endings = new Map<string, string>(CONTROL_ENDINGS);
  const groups = new Map<string, string>();
  for (const { path, groupPrefix, aliases = [] } of table) {
    const meant = groupPrefix ?? path;
    for (const ending of [ownEnding(meant), ...aliases]) (groupPrefix ? groups : endings).set(ending.toLowerCase(), meant);
  }
  // Segments that start an ending: everything before one is what a wrong base URL added.
  const heads = new Set([...endings.keys(), ...groups.keys()].map((ending) => ending.split("/")[0]!));

  /** The path an ending means, if it is one. */
  const meant = (ending: readonly string[]): string | undefined => {
    const exact = endings.get(ending.join("/").toLowerCase());
    if (exact !== undefined) return exact;
    const group = groups.get(ending[0]!.toLowerCase());
    const rest = ending.slice(1);
    // A rest that holds the API's prefix again is a doubled base URL: its later segments say more.
    if (group === undefined || rest.length === 0 || rest.some((s) => s.toLowerCase() === "api")) return undefined;
    return `${group}/${rest.join("/")}`;
  };

  return {
    routes: table.map(listed),
    correct(path) {
      const segments = path.split("/").filter((s) => s !== "");
      // The control plane's paths are its own: only its health check is ever the meaning there.
      const last = segments[0]?.toLowerCase() === "__sandbox" ? 1 : segments.length;
      for (let start = 0; start < last; start++) {
        if (!heads.has(segments[start]!.toLowerCase())) continue;
        const corrected = meant(segments.slice(start));
        if (corrected !== undefined) return corrected === path ? undefined : corrected;
      }
      return undefined;
    },
  };
}

/** A path without the API's base (`/api/v2/auth/token` → `auth/token`, `/api/login_check` → `login_check`). */
function ownEnding(path: string): string {
  const segments = path.split("/").filter((s) => s !== "");
  if (segments[0] === "api") segments.shift();
  if (/^v\d+$/.test(segments[0] ?? "")) segments.shift();
  return segments.join("/");
}

/** A route as the 404 and the report list it: a group as `ANY prefix/*`; HEAD goes without saying beside GET. */
function listed({ path, methods, groupPrefix }: MerchantRoute): string {
  if (groupPrefix) return `ANY ${groupPrefix}/*`;
  const shown = methods.includes("GET") ? methods.filter((m) => m !== "HEAD") : methods;
  return `${shown.join("|")} ${path}`;
}

/** The sandbox's own: its route table's paths and corrections. */
export const API_PATHS: ApiPaths = apiPaths(MERCHANT_ROUTE_TABLE);
