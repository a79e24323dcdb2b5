import type { SandboxSettings, Scope } from "../core/config.js";
import type { Endpoint, EndpointName } from "../core/context.js";
import { jwksEndpoint } from "./discovery.js";
import { deprecationHeaders, LOGIN_BODY, loginCheckEndpoint, loginGone } from "./login-check.js";
import { paymentInitBody, paymentInitEndpoint } from "./payment-init.js";
import { protectedEndpoint } from "./protected.js";
import type { RequestForm } from "./request-form.js";
import { TOKEN_BODY, tokenEndpoint } from "./token.js";

/**
 * The merchant API's routes, in one table: the router and its 405s (src/app/routes.ts, with the
 * form check of request-form.ts, before identity and rules), the 404's list and hint and the
 * report's `wrong_base_path` (api-paths.ts), the paths an express mount keeps (app/sandbox-paths.ts)
 * and the OpenAPI document's paths are all made from it, so a route cannot be served undocumented,
 * documented unserved, or missing from a hint (test/unit/route-table.test.ts adds one to a copy).
 * `path` is the documented form; the two protected groups take the seven methods GET … OPTIONS on
 * any path under their prefix, which the document writes as `{path}`. The order is the order the
 * 404 and the report list the routes in.
 */
export interface MerchantRoute extends Pick<RequestForm, "json" | "credentials" | "formless"> {
  path: string;
  name: EndpointName;
  /** The methods its endpoint takes; the form check answers the rest 405 with this list in `Allow`. */
  methods: readonly string[];
  endpoint: Endpoint;
  /** For a protected group: the prefix every path under it starts with. */
  groupPrefix?: string;
  /** Headers every answer of the route carries, refusals included (the deprecated login's), per sandbox. */
  headers?: (settings: SandboxSettings) => Record<string, string>;
  /**
   * Other endings clients send for this route (other servers' names, plurals), lower case: the 404's
   * hint and the report name the route for them. Its own ending, the path after `/api/v2/`, needs no entry.
   */
  aliases?: readonly string[];
}

/** The protected groups' methods: every one the document can list for them, and nothing else (no TRACE, no CONNECT). */
const ANY_METHOD = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

function protectedGroup(scope: Scope, aliases: readonly string[]): MerchantRoute {
  const prefix = `/api/v2/${scope}`;
  return { path: `${prefix}/{path}`, name: scope, methods: ANY_METHOD, endpoint: protectedEndpoint(scope), groupPrefix: prefix, aliases };
}

export const MERCHANT_ROUTE_TABLE: readonly MerchantRoute[] = [
  {
    path: "/api/v2/auth/token",
    name: "token",
    methods: ["POST"],
    endpoint: tokenEndpoint,
    json: () => TOKEN_BODY,
    credentials: true,
    aliases: ["auth", "token", "oauth/token", "oauth2/token"],
  },
  protectedGroup("payment", ["payments"]),
  {
    path: "/api/v2/payment/init",
    name: "payment-init",
    methods: ["POST"],
    endpoint: paymentInitEndpoint,
    json: paymentInitBody,
    aliases: ["payments/init"],
  },
  protectedGroup("cashout", ["cashouts"]),
  {
    path: "/api/login_check",
    name: "login",
    methods: ["POST"],
    endpoint: loginCheckEndpoint,
    headers: deprecationHeaders,
    json: () => LOGIN_BODY,
    formless: loginGone,
  },
  {
    path: "/.well-known/jwks.json",
    name: "jwks",
    methods: ["GET", "HEAD"],
    endpoint: jwksEndpoint,
    aliases: ["jwks.json", "jwks", ".well-known/jwks"],
  },
];
