import type { SandboxSettings, Scope } from "../core/config.js";
import type { Endpoint, EndpointName } from "../core/context.js";
import { jwksEndpoint, notFoundEndpoint } from "../endpoints/discovery.js";
import { controlEndpoint } from "../control/router.js";
import { deprecationHeaders, loginCheckEndpoint } from "../endpoints/login-check.js";
import { paymentInitEndpoint } from "../endpoints/payment-init.js";
import { protectedEndpoint } from "../endpoints/protected.js";
import { tokenEndpoint } from "../endpoints/token.js";
import type { SandboxContext } from "./context.js";

/**
 * Routing by exact path first, then by group prefix: one map lookup or two string tests per
 * request, before anything is parsed.
 */
export interface Route {
  name: EndpointName;
  /** Merchant API endpoints take a narrower context than the whole sandbox; the control plane takes it all. */
  endpoint: Endpoint<SandboxContext>;
  /** Headers every answer of this route carries, refusals included (the deprecated login's). */
  headers?: Record<string, string>;
}

/** Everything under /__sandbox/ is the control plane (health included), routed by its own table. */
const CONTROL: Route = { name: "control", endpoint: controlEndpoint };

const GROUPS: Array<{ prefix: string; route: Route }> = (["payment", "cashout"] as Scope[]).map((scope) => ({
  prefix: `/api/v2/${scope}`,
  route: { name: scope, endpoint: protectedEndpoint(scope) },
}));

const NOT_FOUND: Route = { name: "unknown", endpoint: notFoundEndpoint };

/**
 * The router of one sandbox, built when it starts: the login's headers come from the sandbox's
 * settings, so they are formatted here once rather than per request (or cached in the module).
 */
export function createRouter(settings: SandboxSettings): (path: string) => Route {
  const exact = new Map<string, Route>([
    ["/api/v2/auth/token", { name: "token", endpoint: tokenEndpoint }],
    ["/api/v2/payment/init", { name: "payment-init", endpoint: paymentInitEndpoint }],
    ["/api/login_check", { name: "login", endpoint: loginCheckEndpoint, headers: deprecationHeaders(settings) }],
    ["/.well-known/jwks.json", { name: "jwks", endpoint: jwksEndpoint }],
  ]);
  return (path) => {
    const found = exact.get(path);
    if (found) return found;
    if (path.startsWith("/__sandbox/")) return CONTROL;
    for (const group of GROUPS) {
      if (path === group.prefix || path.startsWith(group.prefix + "/")) return group.route;
    }
    return NOT_FOUND;
  };
}
