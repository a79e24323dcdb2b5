/**
 * The stable `code` of every refusal, for the OpenAPI document: one `const` per code with what it
 * means, and the lists each response narrows `code` to. test/control/openapi.test.ts checks this
 * catalogue against the codes the source throws, both ways.
 */

/** `components.schemas.ErrorCode`: every code, each with what it means. */
export const errorCodeSchema = {
  title: "ErrorCode",
  description:
    "The stable refusal code: switch on this, never on the text. Each value below says when the sandbox gives it; `simulated_<status>` is any other error status a scenario rule scripts.",
  anyOf: [
    // The request itself (400 invalid_request).
    { const: "body_malformed_json", description: "400: the body says it is JSON but does not parse (the position of the syntax error is given)." },
    { const: "body_not_object", description: "400: the JSON body is null, an array, a string or a number, not an object." },
    { const: "body_not_utf8", description: "400: the JSON body is not valid UTF-8." },
    { const: "api_key_missing", description: "400: token exchange without api_key (neither the body field nor X-Api-Key, or sent empty)." },
    { const: "api_secret_missing", description: "400: token exchange without api_secret (neither the body field nor X-Api-Secret, or sent empty)." },
    {
      const: "credential_conflict",
      description: "400: a credential sent in both the body and its header with different values (precedence `must_match`, the default).",
    },
    { const: "credential_sent_twice", description: "400: a credential sent in both the body and its header (precedence `reject_both`)." },
    { const: "credential_not_string", description: "400: the body field api_key or api_secret is not a string." },
    { const: "credential_header_repeated", description: "400: X-Api-Key or X-Api-Secret sent more than once." },
    { const: "authorization_not_bearer", description: "400: the Authorization header uses another scheme than Bearer (Basic, a bare token …)." },
    { const: "bearer_token_empty", description: "400: `Authorization: Bearer` with no token." },
    { const: "bearer_token_malformed", description: "400: the bearer token has characters outside RFC 6750's token68 (spaces, quotes …)." },
    { const: "authorization_header_repeated", description: "400: more than one Authorization header." },
    {
      const: "token_in_query",
      description: "400: a token in the query string (`access_token`, `token`, `jwt`, `bearer`) on the payment or cashout groups.",
    },
    { const: "payment_token_header_repeated", description: "400: payment/init with transport `header:<Name>`, and that header sent more than once." },
    { const: "payment_token_not_string", description: "400: payment/init with transport `body:<field>`, and that field is not a string." },
    { const: "login_body_missing", description: "400: POST /api/login_check without a body." },
    { const: "login_username_missing", description: "400: the login body has no non-empty `username` (or `email`)." },
    { const: "login_password_missing", description: "400: the login body has no non-empty `password`." },
    {
      const: "http_malformed",
      description: "400: not valid HTTP/1.1 (bad request line, header or framing); answered by the server before any endpoint.",
    },
    {
      const: "request_timeout",
      description: "408: the request's headers or body did not arrive in time (serve --headers-timeout, --request-timeout).",
    },
    { const: "host_missing", description: "400: an HTTP/1.1 request without a Host header; answered by the server before any endpoint." },
    { const: "expectation_unsupported", description: "417: an Expect header other than 100-continue; answered by the server before any endpoint." },
    {
      const: "headers_too_large",
      description:
        "431: the header section is larger than the limit (serve --max-header-bytes, 16 KB by default); answered by the server before any endpoint.",
    },
    {
      const: "headers_too_many",
      description:
        "431: more header fields than the limit (serve --max-headers, 100 by default); answered by the server before any endpoint, so a field past node's own count limit (a second Authorization) cannot go unseen.",
    },
    // Credentials and tokens.
    {
      const: "credentials_missing",
      description: '401 with no `error` member and a bare `WWW-Authenticate: Bearer realm="merchant-api"` (RFC 6750 §3.1): no credentials at all.',
    },
    { const: "unknown_api_key", description: "401 invalid_client: no loaded merchant has this api_key." },
    { const: "wrong_api_secret", description: "401 invalid_client: the api_secret does not belong to the api_key (or was rotated)." },
    { const: "credentials_rejected", description: "401: a scenario rule (`reject_credentials`) refuses this request's credentials or token." },
    {
      const: "merchant_disabled",
      description: "401 (403 by setting, on the token endpoint): the merchant is disabled; its exchanges, tokens and payment token are refused.",
    },
    {
      const: "payment_token_not_accepted",
      description: "401 invalid_token: the merchant payment token was sent to the payment or cashout groups, which need the JWT access token.",
    },
    {
      const: "token_malformed",
      description:
        "401 invalid_token: the bearer token is not a well-formed signed JWT, or not in its one canonical text (a base64url part whose last character carries bits past the data, a UTF-8 BOM before the header or payload JSON).",
    },
    { const: "token_encrypted", description: "401 invalid_token: the bearer token is a JWE (five parts); only the signed access token is accepted." },
    {
      const: "token_algorithm_rejected",
      description: "401 invalid_token: the token's `alg` is not the configured one (`none`, key confusion, HS256 against an RSA key …).",
    },
    { const: "token_kid_missing", description: "401 invalid_token: the token has no `kid` header." },
    {
      const: "token_unknown_kid",
      description: "401 invalid_token: the token's key is not (or no longer) one of this sandbox's: rotated, or another instance's.",
    },
    {
      const: "token_signature_invalid",
      description:
        "401 invalid_token: the signature does not verify (altered, or signed with another key), or is an ES256 signature in its high-S form (the second text of a valid signature).",
    },
    {
      const: "token_unsupported",
      description: "401 invalid_token: the token uses a JOSE feature the API does not support (e.g. an unknown `crit` entry).",
    },
    {
      const: "token_claims_invalid",
      description:
        "401 invalid_token: a required claim (iss, aud, sub, exp, iat, jti) is missing or of the wrong type, or `nbf` is present and not a number.",
    },
    { const: "token_not_access_token", description: "401 invalid_token: the token's `typ` is not `at+jwt`, e.g. the deprecated login's token." },
    { const: "token_wrong_issuer", description: "401 invalid_token: `iss` is not this sandbox's issuer." },
    { const: "token_wrong_audience", description: "401 invalid_token: `aud` does not include this sandbox's audience." },
    { const: "token_unknown_merchant", description: "401 invalid_token: `sub` is no merchant of this sandbox." },
    {
      const: "token_not_yet_valid",
      description: "401 invalid_token: `nbf` or `iat` is in the future (beyond the leeway) on the merchant's scenario clock.",
    },
    { const: "token_expired", description: "401 invalid_token: `exp` has passed (beyond the leeway), or a scenario rule expired the token early." },
    { const: "token_revoked", description: "401 invalid_token: the token was revoked (a scenario rule, a session reset or a sandbox reset)." },
    {
      const: "access_token_on_payment_init",
      description: "401 invalid_token: the JWT access token was sent to POST /api/v2/payment/init, which takes the merchant payment token.",
    },
    { const: "payment_token_unknown", description: "401 invalid_token: the merchant payment token is not known to this sandbox." },
    { const: "payment_token_expired", description: "401 invalid_token: a scenario rule expired the merchant payment token." },
    { const: "payment_token_revoked", description: "401 invalid_token: a scenario rule revoked the merchant payment token." },
    { const: "insufficient_scope", description: "403 insufficient_scope: a valid access token without the group's scope (`payment` or `cashout`)." },
    // Routing, method, size, media type, removal.
    {
      const: "not_found",
      description:
        "404: no such endpoint (the message lists the routes and hints at near misses), no such session, no such merchant (token minting), or the control plane is off.",
    },
    { const: "method_not_allowed", description: "405: the endpoint does not take this method; `Allow` lists the ones it does." },
    { const: "payload_too_large", description: "413: the body is over the limit (64 KiB by default, `maxBodyBytes`)." },
    {
      const: "unsupported_media_type",
      description: "415: a body that is not declared as JSON (`Content-Type: application/json` or `application/*+json`) where JSON is required.",
    },
    { const: "login_gone", description: "410: POST /api/login_check has been removed (`--login-mode gone`, or a scenario's `login_gone` action)." },
    // Simulated by scenario rules, and faults.
    {
      const: "rate_limited",
      description: "429: simulated by a scenario rule's `respond: {status: 429}` (with `Retry-After` when the rule gives `retry_after`).",
    },
    {
      const: "service_unavailable",
      description: "503: simulated by a scenario rule's `respond: {status: 503}` (with `Retry-After` when the rule gives `retry_after`).",
    },
    {
      type: "string",
      pattern: "^simulated_[1-5][0-9]{2}$",
      description: "Any other error status a scenario rule's `respond` scripts without a body, e.g. `simulated_502`.",
    },
    { const: "scenario_fault", description: "500: a scenario rule cannot do what it says (a response template that cannot be filled)." },
    { const: "internal_error", description: "500: a bug in merchant-sandbox, not in the request." },
    // Control plane.
    {
      const: "admin_token_required",
      description: "401 invalid_token: the control plane was started with an admin token, and the request lacks it or sends a wrong one.",
    },
    {
      const: "host_not_allowed",
      description:
        "403 access_denied: the control plane does not answer to this Host (DNS rebinding); allow a name with --allowed-hosts. Localhost, IP addresses and single-label names are always allowed.",
    },
    {
      const: "cross_site_request",
      description:
        "403 access_denied: a control-plane request from a web page: an Origin other than the sandbox's own, `Origin: null`, or `Sec-Fetch-Site: cross-site`. Call it from a script or CI.",
    },
    {
      const: "control_json_required",
      description:
        "415: a control-plane POST without `Content-Type: application/json` (an empty body needs it too), so a web page cannot send it unasked.",
    },
    { const: "too_many_sessions", description: "429: the sandbox holds as many sessions as it may (`--max-sessions`)." },
    { const: "unknown_field", description: "400: a control-plane body has a field the endpoint does not take." },
    { const: "unknown_parameter", description: "400: GET /__sandbox/requests with a query parameter it does not take." },
    { const: "limit_invalid", description: "400: `limit` is not a whole number of at least 1." },
    { const: "since_invalid", description: "400: `since` is neither a request id (`req_12`) nor an ISO time." },
    { const: "session_scenario_invalid", description: "400: `scenario` is not a string." },
    { const: "session_scenario_unknown", description: "400: `scenario` names no loaded or library scenario." },
    { const: "clock_change_missing", description: "400: a clock change with none of `advance`, `set`, `freeze`." },
    { const: "clock_set_invalid", description: "400: `set` is not an ISO 8601 time." },
    { const: "clock_out_of_range", description: "400: the change would move the clock outside years 0001 to 9999; the clock is left as it was." },
    { const: "clock_advance_invalid", description: "400: `advance` is not a duration (`90s`, `59m`, `-5m`) or a number of seconds." },
    { const: "clock_freeze_invalid", description: "400: `freeze` is not a boolean." },
    { const: "mint_field_invalid", description: "400: `merchant` or `variant` is not a string." },
    {
      const: "mint_variant_unknown",
      description:
        "400: `variant` is not one of the catalogue's (an allow-list: names such as `constructor` are refused too); the message lists them.",
    },
    {
      const: "mint_ttl_invalid",
      description:
        "400: `ttl` is not a duration or a number of seconds, or is under 1 s or over ten years (for an already expired token use variant `expired`).",
    },
    { const: "scan_text_missing", description: "400: POST /__sandbox/scan without `text`." },
    { const: "scan_text_invalid", description: "400: POST /__sandbox/scan with a `text` that is not a string." },
  ],
} as const;

/** The codes each refusal of the API can carry, by endpoint and status. */
export const BODY_CODES = ["body_malformed_json", "body_not_object", "body_not_utf8"] as const;
export const BEARER_HEADER_CODES = [
  "authorization_not_bearer",
  "bearer_token_empty",
  "bearer_token_malformed",
  "authorization_header_repeated",
] as const;

export const TOKEN_400_CODES = [
  "api_key_missing",
  "api_secret_missing",
  "credential_conflict",
  "credential_sent_twice",
  "credential_not_string",
  "credential_header_repeated",
  ...BODY_CODES,
] as const;
export const TOKEN_401_CODES = ["unknown_api_key", "wrong_api_secret", "credentials_rejected", "merchant_disabled"] as const;

export const GROUP_400_CODES = [...BEARER_HEADER_CODES, "token_in_query"] as const;
export const GROUP_401_CODES = [
  "credentials_missing",
  "credentials_rejected",
  "payment_token_not_accepted",
  "token_malformed",
  "token_encrypted",
  "token_algorithm_rejected",
  "token_kid_missing",
  "token_unknown_kid",
  "token_signature_invalid",
  "token_unsupported",
  "token_claims_invalid",
  "token_not_access_token",
  "token_wrong_issuer",
  "token_wrong_audience",
  "token_unknown_merchant",
  "token_not_yet_valid",
  "token_expired",
  "token_revoked",
  "merchant_disabled",
] as const;

export const INIT_400_CODES = [...BEARER_HEADER_CODES, "payment_token_header_repeated", "payment_token_not_string", ...BODY_CODES] as const;
export const INIT_401_CODES = [
  "credentials_missing",
  "credentials_rejected",
  "access_token_on_payment_init",
  "payment_token_unknown",
  "payment_token_expired",
  "payment_token_revoked",
  "merchant_disabled",
] as const;

export const LOGIN_400_CODES = ["login_body_missing", "login_username_missing", "login_password_missing", ...BODY_CODES] as const;
