/**
 * The merchant API's paths as a client sees them, and the one guess at which of them a mistyped
 * path meant. The 404 answer (discovery.ts) and the report's `wrong_base_path` finding both use
 * it, so what the client is told at the call and in the report always agree.
 */

/** What the merchant API serves, in the order the 404 answer and the report list it. */
export const API_ROUTES: readonly string[] = [
  "POST /api/v2/auth/token",
  "ANY /api/v2/payment/*",
  "POST /api/v2/payment/init",
  "ANY /api/v2/cashout/*",
  "POST /api/login_check",
  "GET /.well-known/jwks.json",
];

const TOKEN = "/api/v2/auth/token";
const JWKS = "/.well-known/jwks.json";

/**
 * Exact endings (lower case, from a segment that names a resource) and the path they meant: the
 * API's own paths, and the names other OAuth servers and JWKS hosts use for the same thing.
 */
const ENDINGS: ReadonlyMap<string, string> = new Map([
  ["auth/token", TOKEN],
  ["auth", TOKEN],
  ["token", TOKEN],
  ["oauth/token", TOKEN],
  ["oauth2/token", TOKEN],
  ["payment/init", "/api/v2/payment/init"],
  ["payments/init", "/api/v2/payment/init"],
  ["login_check", "/api/login_check"],
  ["jwks.json", JWKS],
  ["jwks", JWKS],
  [".well-known/jwks.json", JWKS],
  [".well-known/jwks", JWKS],
  ["__sandbox/health", "/__sandbox/health"],
]);

/** The protected groups: any path under them is theirs, so the rest is kept as sent (ids are case-sensitive). */
const GROUPS: ReadonlyMap<string, string> = new Map([
  ["payment", "/api/v2/payment"],
  ["payments", "/api/v2/payment"],
  ["cashout", "/api/v2/cashout"],
  ["cashouts", "/api/v2/cashout"],
]);

/** Segments that start an ending above: everything before one is what a wrong base URL added. */
const HEADS: ReadonlySet<string> = new Set([...ENDINGS.keys(), ...GROUPS.keys()].map((ending) => ending.split("/")[0]!));

/**
 * The API path a client most likely meant by `path`, or undefined when no path fits (or `path` is
 * already that path). What a wrong base URL does to a path is dropped: a version other than v2
 * (`/api/v1/auth/token`), a doubled prefix (`/api/v2/api/v2/payment/x`), a missing `/api`
 * (`/v2/auth/token`), a path of its own (`/merchant/api/v2/auth/token`), trailing or doubled
 * slashes, upper case; and the common other names of the token endpoint (`/oauth/token`,
 * `/api/v2/token`) and of the JWKS (`/jwks.json`, `/.well-known/jwks`) are mapped to the API's.
 * Pure, and only as safe to echo as `path` is: pass the redacted path.
 */
export function correctApiPath(path: string): string | undefined {
  const segments = path.split("/").filter((s) => s !== "");
  // The control plane's paths are its own: only its health check is ever the meaning there.
  const last = segments[0]?.toLowerCase() === "__sandbox" ? 1 : segments.length;
  for (let start = 0; start < last; start++) {
    if (!HEADS.has(segments[start]!.toLowerCase())) continue;
    const corrected = meant(segments.slice(start));
    if (corrected !== undefined) return corrected === path ? undefined : corrected;
  }
  return undefined;
}

/** The path an ending means, if it is one. */
function meant(ending: readonly string[]): string | undefined {
  const exact = ENDINGS.get(ending.join("/").toLowerCase());
  if (exact !== undefined) return exact;
  const group = GROUPS.get(ending[0]!.toLowerCase());
  const rest = ending.slice(1);
  // A rest that holds the API's prefix again is a doubled base URL: its later segments say more.
  if (group === undefined || rest.length === 0 || rest.some((s) => s.toLowerCase() === "api")) return undefined;
  return `${group}/${rest.join("/")}`;
}
