import { SESSION_ID_PATTERN } from "../../core/session-path.js";
/**
 * `components.securitySchemes` and `components.headers` of the OpenAPI document (the responses are
 * generated per operation: operations.ts).
 */

export const securitySchemes = {
  AccessToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "The access token from POST /api/v2/auth/token, as `Authorization: Bearer <token>` (RFC 6750 §2.1; never in the query string). Verified with the configured algorithm only (the token's `alg` is never trusted), the sandbox's own key by `kid` (`jku`, `x5u`, embedded `jwk` are never followed), `typ: at+jwt` (or the deprecated login's `typ: JWT` token, accepted unless `--login-token refused`), iss, aud, nbf/iat/exp against the merchant's scenario clock with the leeway, revocation and the merchant's state. The requirement's roles are the scope the group needs.",
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
    description:
      "The successor of the deprecated login: the token endpoint, at the root or, under a session's base URL, under that base URL (`</s/{session_id}/api/v2/auth/token>`).",
    schema: {
      type: "string",
      // The session id's own pattern, unanchored, inside the optional base path.
      pattern: `^</(s/${SESSION_ID_PATTERN.source.slice(1, -1)}/)?api/v2/auth/token>; rel="successor-version"$`,
      examples: ['</api/v2/auth/token>; rel="successor-version"'],
    },
  },
  Location: { description: "Where the created resource is.", schema: str },
  Allow: { description: "The methods the endpoint takes.", schema: { ...str, examples: ["POST"] } },
  "X-Sandbox-Rule": {
    description:
      "`<scenario>/<rule>[, …]`: the scenario rules that fired for this request and shaped its answer (a scripted status, a delay, a rejected or expired credential …). Absent when no rule fired, so scripted behaviour is never mistaken for a real fault.",
    schema: { ...str, examples: ["token-endpoint-outage/outage"] },
  },
} as const;
