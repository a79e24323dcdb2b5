import { LOGIN_400_CODES } from "./error-codes.js";

/**
 * The merchant API's paths, as the sandbox simulates them: the token exchange, the two protected
 * groups (any method, any path under the prefix), the hosted payment, the public keys, and the
 * deprecated login.
 */

const r = (name: string) => ({ $ref: `#/components/responses/${name}` });
const s = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const h = (name: string) => ({ $ref: `#/components/headers/${name}` });
const TAG = ["Merchant API"];

const tokenOperation = {
  tags: TAG,
  operationId: "exchangeCredentials",
  summary: "Exchange api_key and api_secret for an access token",
  description:
    "Each credential comes from the JSON body or its header (X-Api-Key, X-Api-Secret), independently: key in a header and secret in the body is fine. A credential sent both ways must match (precedence setting). The merchant (by api_key) selects its scenario, whose rules may script outages, rate limits, rotated secrets or pre-expired tokens. Validation order: method, size, media type, body, credentials, merchant, secret, merchant state.",
  security: [{ ApiKeyHeader: [], ApiSecretHeader: [] }, { ApiKeyHeader: [] }, { ApiSecretHeader: [] }, {}],
  requestBody: {
    required: false,
    description: "Optional when both credentials come as headers. Must be declared as JSON when present.",
    content: { "application/json": { schema: s("TokenRequest") } },
  },
  responses: {
    "200": {
      description: "An access token (RFC 6749 §5.1). Renew it before `expires_in` runs out: there is no refresh token.",
      headers: { "Cache-Control": h("Cache-Control-NoStore"), Pragma: h("Pragma"), "X-Sandbox-Rule": h("X-Sandbox-Rule") },
      content: {
        "application/json": {
          schema: s("TokenResponse"),
          example: { access_token: "eyJhbGciOiJSUzI1NiIsImtpZCI6Ij…", token_type: "Bearer", expires_in: 3600 },
        },
      },
    },
    "400": r("TokenBadRequest"),
    "401": r("TokenUnauthorized"),
    "403": r("TokenForbidden"),
    "405": r("MethodNotAllowed"),
    "413": r("PayloadTooLarge"),
    "415": r("UnsupportedMediaType"),
    "429": r("RateLimited"),
    "503": r("ServiceUnavailable"),
    default: r("Scripted"),
  },
};

const groupDescription = (scope: "payment" | "cashout") =>
  `Every method on /api/v2/${scope} and on every path under it, at any depth ({path} stands for one or more segments; HEAD, OPTIONS and other methods are treated alike). Authorised by the access token with the '${scope}' scope. Business behaviour is not simulated: an authenticated call answers a placeholder naming the merchant, operation, scope and token id. The body is ignored, except that it may not exceed the size limit.`;

/** One operation of a protected group: the same contract for every method. */
function groupOperation(scope: "payment" | "cashout", method: string, withBody: boolean) {
  return {
    tags: TAG,
    operationId: `${scope}${method[0]!.toUpperCase()}${method.slice(1)}`,
    summary: `${method.toUpperCase()} /api/v2/${scope}/… with the access token`,
    description: groupDescription(scope),
    security: [{ AccessToken: [scope] }],
    ...(withBody && {
      requestBody: { required: false, description: "Not read (business payloads are not simulated).", content: { "*/*": { schema: {} } } },
    }),
    responses: {
      "200": {
        description: "Authenticated: the placeholder.",
        headers: { "Cache-Control": h("Cache-Control-NoStore"), "X-Sandbox-Rule": h("X-Sandbox-Rule") },
        content: { "application/json": { schema: s("ProtectedPlaceholder") } },
      },
      "400": r("BearerBadRequest"),
      "401": r("BearerUnauthorized"),
      "403": r("InsufficientScope"),
      "413": r("PayloadTooLarge"),
      default: r("Scripted"),
    },
  };
}

function groupPathItem(scope: "payment" | "cashout") {
  return {
    summary: `The ${scope} group (any method, any path)`,
    parameters: [
      {
        name: "path",
        in: "path",
        required: true,
        description: `Anything under /api/v2/${scope}/ (one or more segments; /api/v2/${scope} itself is served the same way).`,
        schema: { type: "string" },
        examples: { any: { value: "anything" } },
      },
    ],
    get: groupOperation(scope, "get", false),
    post: groupOperation(scope, "post", true),
    put: groupOperation(scope, "put", true),
    patch: groupOperation(scope, "patch", true),
    delete: groupOperation(scope, "delete", false),
    head: groupOperation(scope, "head", false),
    options: groupOperation(scope, "options", false),
  };
}

const deprecationHeaders = {
  Deprecation: h("Deprecation"),
  Sunset: h("Sunset"),
  Link: h("Link"),
  "Cache-Control": h("Cache-Control-NoStore"),
  "X-Sandbox-Rule": h("X-Sandbox-Rule"),
};
const loginProblem = (description: string, codes: readonly string[], extra: Record<string, unknown> = {}) => ({
  description,
  headers: { ...deprecationHeaders, ...extra },
  content: {
    "application/problem+json": {
      schema: { allOf: [s("ProblemDetails"), { type: "object", properties: { code: { enum: codes } } }] },
    },
  },
});

export const merchantPaths = {
  "/api/v2/auth/token": { post: tokenOperation },
  "/api/v2/payment/init": {
    post: {
      tags: TAG,
      operationId: "initHostedPayment",
      summary: "Start a hosted payment with the merchant payment token",
      description:
        "Authorised by the merchant payment token, NOT the JWT access token: sending the JWT here is the mistake integrations make most, and the 401 explains the two tokens. This exact path takes precedence over the payment group. Answers a seeded payment id and a checkout URL that leads nowhere (hosted checkout is not simulated). Unlike the groups, a token in the query string is not refused here.",
      security: [{ PaymentToken: [] }],
      requestBody: {
        required: false,
        description:
          "Optional and open. Parsed when it is JSON, ignored when it is not declared JSON (except with the `body:<field>` transport, which requires JSON: 415 otherwise).",
        content: { "application/json": { schema: s("PaymentInitRequest"), example: { amount: 1999, currency: "EUR", order_id: "order-42" } } },
      },
      responses: {
        "201": {
          description: "The payment was created; `Location` points to its (placeholder) resource in the payment group.",
          headers: { Location: h("Location"), "Cache-Control": h("Cache-Control-NoStore"), "X-Sandbox-Rule": h("X-Sandbox-Rule") },
          content: { "application/json": { schema: s("PaymentInitResponse") } },
        },
        "400": r("PaymentInitBadRequest"),
        "401": r("PaymentInitUnauthorized"),
        "405": r("MethodNotAllowed"),
        "413": r("PayloadTooLarge"),
        "415": r("UnsupportedMediaType"),
        default: r("Scripted"),
      },
    },
  },
  "/api/v2/payment/{path}": groupPathItem("payment"),
  "/api/v2/cashout/{path}": groupPathItem("cashout"),
  "/.well-known/jwks.json": {
    get: {
      tags: TAG,
      operationId: "getJwks",
      summary: "The public keys that verify access tokens",
      description:
        "Every key some loaded scenario still accepts, by `kid`; during a rotation overlap both keys. Empty with HS256 (a shared secret is never published). Cached briefly so clients re-fetch soon after a rotation. The primary scenario's rules apply here.",
      security: [],
      responses: {
        "200": {
          description: "The key set.",
          headers: {
            "Cache-Control": { description: "Short caching.", schema: { const: "public, max-age=60" } },
            "X-Sandbox-Rule": h("X-Sandbox-Rule"),
          },
          content: { "application/json": { schema: s("Jwks") } },
        },
        "405": r("MethodNotAllowed"),
        default: r("Scripted"),
      },
    },
    head: {
      tags: TAG,
      operationId: "headJwks",
      summary: "The key set's headers",
      security: [],
      responses: { "200": { description: "As GET, without a body." }, "405": r("MethodNotAllowed") },
    },
  },
  "/api/login_check": {
    post: {
      tags: ["Deprecated"],
      operationId: "loginCheck",
      summary: "Deprecated e-mail and password login (Symfony / LexikJWT)",
      description:
        "Deprecated for integrations: use POST /api/v2/auth/token. Every answer, refusals included, carries Deprecation (RFC 9745), Sunset (RFC 8594) and a Link to the successor. Its token has `typ: JWT` and is refused on the payment and cashout groups with a message that points to /api/v2/auth/token. With `--login-mode gone` (or a scenario's `login_gone`) it answers 410 to every method.",
      deprecated: true,
      security: [],
      requestBody: { required: true, content: { "application/json": { schema: s("LoginRequest") } } },
      responses: {
        "200": {
          description: "Logged in.",
          headers: deprecationHeaders,
          content: { "application/json": { schema: s("LoginResponse") } },
        },
        "400": loginProblem("No body, no username/email, no password, or malformed JSON.", LOGIN_400_CODES),
        "401": {
          description: "Unknown e-mail, wrong password, a disabled merchant, or a login a scenario rule rejects: Lexik's own body, not problem+json.",
          headers: deprecationHeaders,
          content: { "application/json": { schema: s("LexikError") } },
        },
        "405": loginProblem("Another method.", ["method_not_allowed"], { Allow: h("Allow") }),
        "410": loginProblem("The login has been removed (`gone` mode).", ["login_gone"]),
        "413": loginProblem("The body is over the limit.", ["payload_too_large"]),
        "415": loginProblem("A body that is not declared as JSON.", ["unsupported_media_type"]),
        default: r("Scripted"),
      },
    },
  },
} as const;
