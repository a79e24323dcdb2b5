import { GROUP_400_CODES, GROUP_401_CODES, INIT_400_CODES, INIT_401_CODES, TOKEN_400_CODES, TOKEN_401_CODES } from "./error-codes.js";

/**
 * `components.securitySchemes`, `components.headers` and the shared `components.responses` of the
 * OpenAPI document.
 */

export const securitySchemes = {
  AccessToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "The access token from POST /api/v2/auth/token, as `Authorization: Bearer <token>` (RFC 6750 §2.1; never in the query string). Verified with the configured algorithm only (the token's `alg` is never trusted), the sandbox's own key by `kid` (`jku`, `x5u`, embedded `jwk` are never followed), `typ: at+jwt`, iss, aud, nbf/iat/exp against the merchant's scenario clock with the leeway, revocation and the merchant's state. The requirement's roles are the scope the group needs.",
  },
  PaymentToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "opaque merchant payment token",
    description:
      "The merchant payment token: opaque, long-lived, configured per merchant (`sandbox-payment-token` for the built-in merchant, `mpt_test_…` for sessions). Not the JWT. Sent as `Authorization: Bearer <payment token>` by default; the transport setting (`--payment-token-transport`) can move it to a header (`header:<Name>`) or a JSON body field (`body:<field>`).",
  },
  ApiKeyHeader: {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "The merchant's api_key, instead of the body field `api_key` (either way, or both with the same value).",
  },
  ApiSecretHeader: {
    type: "apiKey",
    in: "header",
    name: "X-Api-Secret",
    description: "The merchant's api_secret, instead of the body field `api_secret`. Never logged in clear.",
  },
  AdminToken: {
    type: "http",
    scheme: "bearer",
    description:
      "The control plane's admin token, when the sandbox was started with `--admin-token` (MERCHANT_SANDBOX_ADMIN_TOKEN); at least 16 characters. Without one the control plane is open to scripts, yet still refuses web pages (another site's Origin, a Host it does not answer to, a POST not declared as JSON). GET /__sandbox/health never needs it.",
  },
  AdminTokenHeader: {
    type: "apiKey",
    in: "header",
    name: "X-Admin-Token",
    description: "The same admin token, as a header of its own.",
  },
} as const;

const str = { type: "string" } as const;

export const headers = {
  "WWW-Authenticate-Bearer": {
    description:
      'RFC 6750 challenge: `Bearer realm="merchant-api"` alone when no credentials were sent; otherwise with `error`, `error_description` (printable ASCII, no quotes) and, for insufficient_scope, `scope`.',
    schema: str,
    examples: {
      missing: { value: 'Bearer realm="merchant-api"' },
      expired: { value: 'Bearer realm="merchant-api", error="invalid_token", error_description="The access token expired at …"' },
      scope: { value: 'Bearer realm="merchant-api", error="insufficient_scope", error_description="…", scope="cashout"' },
    },
  },
  "WWW-Authenticate-ApiKey": {
    description: "The token endpoint's challenge for refused credentials.",
    schema: { ...str, examples: ['ApiKey realm="merchant-api", error="invalid_client"'] },
  },
  "Retry-After": {
    description:
      "Seconds to wait, on answers a scenario rule scripts with `retry_after` (e.g. the `token-endpoint-outage` and `token-rate-limited` library scenarios).",
    schema: { type: "integer", minimum: 0, examples: [30] },
  },
  "Cache-Control-NoStore": {
    description: "`no-store` on everything about credentials and on every refusal.",
    schema: { const: "no-store" },
  },
  Pragma: { description: "RFC 6749 §5.1.", schema: { const: "no-cache" } },
  Deprecation: {
    description: "RFC 9745: when the endpoint was deprecated, as `@<unix seconds>`.",
    schema: { ...str, examples: ["@1735689600"] },
  },
  Sunset: {
    description: "RFC 8594: when the endpoint goes away, as an HTTP date.",
    schema: { ...str, examples: ["Wed, 30 Jun 2027 23:59:59 GMT"] },
  },
  Link: {
    description: "The successor of the deprecated login.",
    schema: { const: '</api/v2/auth/token>; rel="successor-version"' },
  },
  Location: { description: "Where the created resource is.", schema: str },
  Allow: { description: "The methods the endpoint takes.", schema: { ...str, examples: ["POST"] } },
  "X-Sandbox-Rule": {
    description:
      "`<scenario>/<rule>[, …]`: the scenario rules that fired for this request and shaped its answer (a scripted status, a delay, a rejected or expired credential …). Absent when no rule fired, so scripted behaviour is never mistaken for a real fault.",
    schema: { ...str, examples: ["token-endpoint-outage/outage"] },
  },
} as const;

const h = (name: string) => ({ $ref: `#/components/headers/${name}` });
const problemJson = (codes: readonly string[], fixed: Record<string, unknown>) => ({
  "application/problem+json": {
    schema: {
      allOf: [{ $ref: "#/components/schemas/ProblemDetails" }, { type: "object", properties: { ...fixed, code: { enum: codes } } }],
    },
  },
});
const ruled = { "Cache-Control": h("Cache-Control-NoStore"), "X-Sandbox-Rule": h("X-Sandbox-Rule") };
const bearerChallenge = { ...ruled, "WWW-Authenticate": h("WWW-Authenticate-Bearer") };

export const responses = {
  TokenBadRequest: {
    description:
      "A credential is missing or empty (the message names both ways to send it), sent twice with different values, not a string, or the JSON body is malformed or not an object.",
    headers: ruled,
    content: problemJson(TOKEN_400_CODES, { status: { const: 400 }, error: { const: "invalid_request" } }),
  },
  TokenUnauthorized: {
    description:
      "Unknown api_key, wrong api_secret, a disabled merchant (unless the setting makes that 403), or credentials a scenario rule rejects.",
    headers: { ...ruled, "WWW-Authenticate": h("WWW-Authenticate-ApiKey") },
    content: problemJson(TOKEN_401_CODES, { status: { const: 401 }, error: { const: "invalid_client" } }),
  },
  TokenForbidden: {
    description: "A disabled merchant, with `--disabled-merchant-status 403`.",
    headers: { ...ruled, "WWW-Authenticate": h("WWW-Authenticate-ApiKey") },
    content: problemJson(["merchant_disabled"], { status: { const: 403 }, error: { const: "invalid_client" } }),
  },
  BearerBadRequest: {
    description: "The Authorization header is not Bearer, empty, malformed or repeated, or a token was sent in the query string.",
    headers: bearerChallenge,
    content: problemJson(GROUP_400_CODES, { status: { const: 400 }, error: { const: "invalid_request" } }),
  },
  BearerUnauthorized: {
    description:
      "No credentials (bare challenge, no `error`), or an access token that is expired, revoked, tampered, foreign, of the wrong kind (the payment token, the login's JWT, a JWE) or whose merchant was disabled. The description says which and how to recover: get a new token from POST /api/v2/auth/token.",
    headers: bearerChallenge,
    content: problemJson(GROUP_401_CODES, { status: { const: 401 } }),
  },
  InsufficientScope: {
    description:
      "A valid access token without the group's scope (e.g. a merchant with payment rights only, on cashout). The challenge names the scope.",
    headers: bearerChallenge,
    content: problemJson(["insufficient_scope"], { status: { const: 403 }, error: { const: "insufficient_scope" } }),
  },
  PaymentInitBadRequest: {
    description:
      "The Authorization header is malformed (with a Bearer challenge), the payment token header is repeated or the body field is not a string (header/body transports), or a body declared as JSON does not parse or is not an object.",
    headers: bearerChallenge,
    content: problemJson(INIT_400_CODES, { status: { const: 400 }, error: { const: "invalid_request" } }),
  },
  PaymentInitUnauthorized: {
    description:
      "No payment token, the JWT access token instead of it (`access_token_on_payment_init`: the message explains the two tokens), an unknown, expired or revoked payment token, or a disabled merchant's.",
    headers: bearerChallenge,
    content: problemJson(INIT_401_CODES, { status: { const: 401 } }),
  },
  MethodNotAllowed: {
    description: "The endpoint does not take this method.",
    headers: { ...ruled, Allow: h("Allow") },
    content: problemJson(["method_not_allowed"], { status: { const: 405 }, error: { const: "method_not_allowed" } }),
  },
  PayloadTooLarge: {
    description: "The body is over the limit (64 KiB by default). The connection is closed after the answer.",
    headers: ruled,
    content: problemJson(["payload_too_large"], { status: { const: 413 }, error: { const: "payload_too_large" } }),
  },
  UnsupportedMediaType: {
    description: "A body that is not declared as JSON: send `Content-Type: application/json`.",
    headers: ruled,
    content: problemJson(["unsupported_media_type"], { status: { const: 415 }, error: { const: "unsupported_media_type" } }),
  },
  RateLimited: {
    description: "Only when a scenario rule scripts it (e.g. the `token-rate-limited` library scenario): the sandbox itself never rate-limits.",
    headers: { ...ruled, "Retry-After": h("Retry-After") },
    content: problemJson(["rate_limited"], { status: { const: 429 }, error: { const: "rate_limited" } }),
  },
  ServiceUnavailable: {
    description: "Only when a scenario rule scripts an outage (e.g. the `token-endpoint-outage` library scenario).",
    headers: { ...ruled, "Retry-After": h("Retry-After") },
    content: problemJson(["service_unavailable"], { status: { const: 503 }, error: { const: "temporarily_unavailable" } }),
  },
  Scripted: {
    description:
      "Any other answer a scenario rule scripts with `respond: {status, headers, body}` (a problem+json saying it is simulated, and by which rule, when the rule gives no body; else the rule's JSON or text body), marked by X-Sandbox-Rule. A rule may also delay the answer or drop the connection without one. 500 `internal_error` is a bug of the sandbox; 500 `scenario_fault` a rule that cannot be carried out.",
    headers: { "X-Sandbox-Rule": h("X-Sandbox-Rule"), "Retry-After": h("Retry-After") },
    content: {
      "application/problem+json": { schema: { $ref: "#/components/schemas/ProblemDetails" } },
      "application/json": { schema: {} },
      "text/plain": { schema: { type: "string" } },
    },
  },
} as const;
