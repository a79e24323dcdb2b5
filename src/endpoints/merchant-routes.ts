import type { SandboxSettings, Scope } from "../core/config.js";
import type { Endpoint, EndpointName } from "../core/context.js";
import { jwksEndpoint } from "./discovery.js";
import { deprecationHeaders, LOGIN_BODY, loginCheckEndpoint, loginGone } from "./login-check.js";
import { paymentInitBody, paymentInitEndpoint } from "./payment-init.js";
import { protectedEndpoint } from "./protected.js";
import type { RequestForm } from "./request-form.js";
import { TOKEN_BODY, tokenEndpoint } from "./token.js";

/**
 * The merchant API's routes, in one table that both the router (src/app/routes.ts) and the OpenAPI
 * document read, so a route cannot be served undocumented or documented unserved. `path` is the
 * documented form; the two protected groups take the seven methods GET … OPTIONS on any path under
 * their prefix, which the document writes as `{path}`. The form a request must have (methods, JSON
 * body, credentials) is checked from here, before identity and rules (request-form.ts).
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
}

/** The protected groups' methods: every one the document can list for them, and nothing else (no TRACE, no CONNECT). */
const ANY_METHOD = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

function protectedGroup(scope: Scope): MerchantRoute {
  const prefix = `/api/v2/${scope}`;
  return { path: `${prefix}/{path}`, name: scope, methods: ANY_METHOD, endpoint: protectedEndpoint(scope), groupPrefix: prefix };
}

export const MERCHANT_ROUTE_TABLE: readonly MerchantRoute[] = [
  { path: "/api/v2/auth/token", name: "token", methods: ["POST"], endpoint: tokenEndpoint, json: () => TOKEN_BODY, credentials: true },
  { path: "/api/v2/payment/init", name: "payment-init", methods: ["POST"], endpoint: paymentInitEndpoint, json: paymentInitBody },
  protectedGroup("payment"),
  protectedGroup("cashout"),
  { path: "/.well-known/jwks.json", name: "jwks", methods: ["GET", "HEAD"], endpoint: jwksEndpoint },
  {
    path: "/api/login_check",
    name: "login",
    methods: ["POST"],
    endpoint: loginCheckEndpoint,
    headers: deprecationHeaders,
    json: () => LOGIN_BODY,
    formless: loginGone,
  },
];
