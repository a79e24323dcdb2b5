/**
 * The one catalogue of refusal codes: for each stable `code`, the HTTP statuses it is answered
 * with, the OAuth `error` member it carries, what it means and how to fix the request. The error
 * classes (errors.ts) take their code by type from it, so a code missing here does not compile;
 * the problem mapper, the OpenAPI document and docs/errors.md (`npm run docs:errors`) read it.
 */

/** The OAuth-style `error` member (RFC 6749 §5.2, RFC 6750 §3.1), extended with one value per HTTP refusal. */
export const OAUTH_ERRORS = [
  "invalid_request",
  "invalid_client",
  "invalid_token",
  "insufficient_scope",
  "unsupported_media_type",
  "method_not_allowed",
  "not_found",
  "payload_too_large",
  "gone",
  "access_denied",
  "server_error",
  "temporarily_unavailable",
  "rate_limited",
] as const;
export type OAuthError = (typeof OAUTH_ERRORS)[number];

export interface CatalogueEntry {
  /** Every status the code is answered with, the usual one first. */
  readonly status: readonly [number, ...number[]];
  /** The OAuth `error` members it is sent with; none for a request without any credentials (RFC 6750 §3.1). */
  readonly error: readonly OAuthError[];
  /** When the sandbox answers it. */
  readonly meaning: string;
  /** What the caller changes to get past it. */
  readonly fix: string;
}

export const ERROR_CATALOGUE = {
  // The request itself (400 invalid_request), and HTTP the server refuses before any endpoint.
  body_malformed_json: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The body says it is JSON but does not parse (the position of the syntax error is given).",
    fix: "Send valid JSON (the message gives the position of the syntax error), or leave the body out.",
  },
  path_dot_segment: {
    status: [400],
    error: ["invalid_request"],
    meaning:
      "The path has a `.` or `..` segment (also percent-encoded, `%2e`), which clients resolve before sending; the sandbox refuses it before routing rather than guess which endpoint was meant.",
    fix: "Send the path with its dot segments resolved (the message gives it), e.g. /api/v2/cashout/x for /api/v2/payment/../cashout/x.",
  },
  body_not_object: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The JSON body is null, an array, a string or a number, not an object.",
    fix: "Send a JSON object (`{...}`) as the body.",
  },
  body_not_utf8: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The JSON body is not valid UTF-8.",
    fix: "Encode the body as UTF-8.",
  },
  api_key_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning:
      "Token exchange without api_key (neither the body field nor X-Api-Key, or sent empty). HTTP Basic credentials (`curl -u key:secret`) are not read: the message says so when they were sent.",
    fix: "Send the api_key as the body field `api_key` or the `X-Api-Key` header, not empty (not as HTTP Basic).",
  },
  api_secret_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning:
      "Token exchange without api_secret (neither the body field nor X-Api-Secret, or sent empty). HTTP Basic credentials are not read: the message says so when they were sent.",
    fix: "Send the api_secret as the body field `api_secret` or the `X-Api-Secret` header, not empty (not as HTTP Basic).",
  },
  credential_conflict: {
    status: [400],
    error: ["invalid_request"],
    meaning: "A credential sent in both the body and its header with different values (precedence `must_match`, the default).",
    fix: "Send each credential one way only, or the same value both ways.",
  },
  credential_sent_twice: {
    status: [400],
    error: ["invalid_request"],
    meaning: "A credential sent in both the body and its header (precedence `reject_both`).",
    fix: "Send each credential one way only: the body field or its header.",
  },
  credential_not_string: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The body field api_key or api_secret is not a string.",
    fix: "Send `api_key` and `api_secret` as JSON strings.",
  },
  credential_header_repeated: {
    status: [400],
    error: ["invalid_request"],
    meaning: "X-Api-Key or X-Api-Secret sent more than once.",
    fix: "Send X-Api-Key and X-Api-Secret once each.",
  },
  authorization_not_bearer: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The Authorization header uses another scheme than Bearer (Basic, a bare token …).",
    fix: "Send `Authorization: Bearer <token>`.",
  },
  bearer_token_empty: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`Authorization: Bearer` with no token.",
    fix: "Put the token after `Bearer `.",
  },
  bearer_token_malformed: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The bearer token has characters outside RFC 6750's token68 (spaces, quotes …).",
    fix: "Send the token exactly as issued, with nothing around it (no quotes, no spaces).",
  },
  authorization_header_repeated: {
    status: [400],
    error: ["invalid_request"],
    meaning: "More than one Authorization header.",
    fix: "Send one Authorization header.",
  },
  token_in_query: {
    status: [400],
    error: ["invalid_request"],
    meaning: "A token in the query string (`access_token`, `token`, `jwt`, `bearer`) on the payment or cashout groups.",
    fix: "Send the token in the Authorization header, never in the URL (URLs end up in logs).",
  },
  payment_token_header_repeated: {
    status: [400],
    error: ["invalid_request"],
    meaning: "Payment/init with transport `header:<Name>`, and that header sent more than once.",
    fix: "Send the payment token header once.",
  },
  payment_token_not_string: {
    status: [400],
    error: ["invalid_request"],
    meaning: "Payment/init with transport `body:<field>`, and that field is not a string.",
    fix: "Send the payment token body field as a JSON string.",
  },
  login_body_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning: "POST /api/login_check without a body.",
    fix: "Send a JSON body with `username` and `password` (better: move to POST /api/v2/auth/token).",
  },
  login_username_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The login body has no non-empty `username` (or `email`).",
    fix: "Send a non-empty `username` (or `email`).",
  },
  login_password_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The login body has no non-empty `password`.",
    fix: "Send a non-empty `password`.",
  },
  http_malformed: {
    status: [400],
    error: ["invalid_request"],
    meaning: "Not valid HTTP/1.1 (bad request line, header or framing); answered by the server before any endpoint.",
    fix: "Send valid HTTP/1.1; an HTTP library does this for you.",
  },
  request_timeout: {
    status: [408],
    error: ["invalid_request"],
    meaning: "The request's headers or body did not arrive in time (serve --headers-timeout, --request-timeout).",
    fix: "Send the whole request promptly, or raise the server's timeouts.",
  },
  host_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning: "An HTTP/1.1 request without a Host header; answered by the server before any endpoint.",
    fix: "Send a Host header (every HTTP/1.1 client does).",
  },
  expectation_unsupported: {
    status: [417],
    error: ["invalid_request"],
    meaning: "An Expect header other than 100-continue; answered by the server before any endpoint.",
    fix: "Send no Expect header, or `Expect: 100-continue`.",
  },
  headers_too_large: {
    status: [431],
    error: ["invalid_request"],
    meaning: "The header section is larger than the limit (serve --max-header-bytes, 16 KB by default); answered by the server before any endpoint.",
    fix: "Send fewer or shorter headers, or raise --max-header-bytes.",
  },
  headers_too_many: {
    status: [431],
    error: ["invalid_request"],
    meaning:
      "More header fields than the limit (serve --max-headers, 100 by default); answered by the server before any endpoint, so a field past node's own count limit (a second Authorization) cannot go unseen.",
    fix: "Send fewer header fields, or raise --max-headers.",
  },
  // Credentials and tokens.
  credentials_missing: {
    status: [401],
    error: [],
    meaning: 'No credentials at all: a 401 with no `error` member and a bare `WWW-Authenticate: Bearer realm="merchant-api"` (RFC 6750 §3.1).',
    fix: "Send the token as `Authorization: Bearer <token>`.",
  },
  unknown_api_key: {
    status: [401],
    error: ["invalid_client"],
    meaning: "No loaded merchant has this api_key.",
    fix: "Use the api_key of a merchant the sandbox loaded (`sandbox-api-key` by default, or a session's).",
  },
  wrong_api_secret: {
    status: [401],
    error: ["invalid_client"],
    meaning: "The api_secret does not belong to the api_key (or was rotated).",
    fix: "Use the api_secret that belongs to the api_key, after any rotation.",
  },
  credentials_rejected: {
    status: [401],
    error: ["invalid_client", "invalid_token"],
    meaning:
      "A scenario rule (`reject_credentials`) refuses this request's credentials (invalid_client on the token endpoint) or token (invalid_token).",
    fix: "Expected when the scenario scripts it: check how the integration reacts; otherwise use another scenario.",
  },
  merchant_disabled: {
    status: [401, 403],
    error: ["invalid_client", "invalid_token"],
    meaning:
      "The merchant is disabled: its exchanges, tokens and payment token are refused (403 on the token endpoint with `--disabled-merchant-status 403`).",
    fix: "Expected when the scenario disables the merchant: the integration must stop and report it, not retry.",
  },
  payment_token_not_accepted: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The merchant payment token was sent to the payment or cashout groups, which need the JWT access token.",
    fix: "Send the JWT access token from POST /api/v2/auth/token; the payment token is only for POST /api/v2/payment/init.",
  },
  token_malformed: {
    status: [401],
    error: ["invalid_token"],
    meaning:
      "The bearer token is not a well-formed signed JWT, or not in its one canonical text (a base64url part whose last character carries bits past the data, a UTF-8 BOM before the header or payload JSON).",
    fix: "Send the access token exactly as POST /api/v2/auth/token issued it.",
  },
  token_encrypted: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The bearer token is a JWE (five parts); only the signed access token is accepted.",
    fix: "Send the signed access token from POST /api/v2/auth/token.",
  },
  token_algorithm_rejected: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The token's `alg` is not the configured one (`none`, key confusion, HS256 against an RSA key …).",
    fix: "Use a token the sandbox signed; never build or re-sign tokens yourself.",
  },
  token_kid_missing: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The token has no `kid` header.",
    fix: "Use a token the sandbox signed: its header names the key.",
  },
  token_unknown_kid: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The token's key is not (or no longer) one of this sandbox's: rotated, or another instance's.",
    fix: "Get a new token from POST /api/v2/auth/token (the key was rotated, or the token is another sandbox's).",
  },
  token_signature_invalid: {
    status: [401],
    error: ["invalid_token"],
    meaning:
      "The signature does not verify (altered, or signed with another key), or is an ES256 signature in its high-S form (the second text of a valid signature).",
    fix: "Send the token unchanged, as the sandbox signed it.",
  },
  token_unsupported: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The token uses a JOSE feature the API does not support (e.g. an unknown `crit` entry).",
    fix: "Use a token the sandbox signed.",
  },
  token_claims_invalid: {
    status: [401],
    error: ["invalid_token"],
    meaning: "A required claim (iss, aud, sub, exp, iat, jti) is missing or of the wrong type, or `nbf` is present and not a number.",
    fix: "Use a token the sandbox issued; do not edit its claims.",
  },
  token_not_access_token: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The token's `typ` is not `at+jwt`, e.g. the deprecated login's token.",
    fix: "Send the access token from POST /api/v2/auth/token, not the login's token.",
  },
  token_wrong_issuer: {
    status: [401],
    error: ["invalid_token"],
    meaning: "`iss` is not this sandbox's issuer.",
    fix: "Get the token from this sandbox's POST /api/v2/auth/token.",
  },
  token_wrong_audience: {
    status: [401],
    error: ["invalid_token"],
    meaning: "`aud` does not include this sandbox's audience.",
    fix: "Get the token from this sandbox's POST /api/v2/auth/token.",
  },
  token_unknown_merchant: {
    status: [401],
    error: ["invalid_token"],
    meaning: "`sub` is no merchant of this sandbox.",
    fix: "Get a new token with the credentials of a merchant this sandbox knows.",
  },
  token_not_yet_valid: {
    status: [401],
    error: ["invalid_token"],
    meaning: "`nbf` or `iat` is in the future (beyond the leeway) on the merchant's scenario clock.",
    fix: "Check the client's clock, or the scenario clock (GET /__sandbox/clock).",
  },
  token_expired: {
    status: [401],
    error: ["invalid_token"],
    meaning: "`exp` has passed (beyond the leeway), or a scenario rule expired the token early.",
    fix: "Get a new token from POST /api/v2/auth/token before `expires_in` runs out.",
  },
  token_revoked: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The token was revoked (a scenario rule, a session reset or a sandbox reset).",
    fix: "Get a new token from POST /api/v2/auth/token.",
  },
  access_token_on_payment_init: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The JWT access token was sent to POST /api/v2/payment/init, which takes the merchant payment token.",
    fix: "Send the merchant payment token to POST /api/v2/payment/init, not the JWT access token.",
  },
  payment_token_unknown: {
    status: [401],
    error: ["invalid_token"],
    meaning: "The merchant payment token is not known to this sandbox.",
    fix: "Use the payment token configured for the merchant (`sandbox-payment-token` by default, or a session's).",
  },
  payment_token_expired: {
    status: [401],
    error: ["invalid_token"],
    meaning: "A scenario rule expired the merchant payment token.",
    fix: "Use the merchant's current payment token from its configuration.",
  },
  payment_token_revoked: {
    status: [401],
    error: ["invalid_token"],
    meaning: "A scenario rule revoked the merchant payment token.",
    fix: "Use the merchant's current payment token from its configuration.",
  },
  insufficient_scope: {
    status: [403],
    error: ["insufficient_scope"],
    meaning: "A valid access token without the group's scope (`payment` or `cashout`).",
    fix: "Use a merchant whose access token has the scope the group needs (the challenge names it).",
  },
  session_credentials_mismatch: {
    status: [401],
    error: ["invalid_client", "invalid_token"],
    meaning:
      "A request under a session's base URL (`/s/{session_id}/…`) carries the credentials of another session's merchant, or of a merchant outside any session (invalid_client on the token endpoint and the login, invalid_token elsewhere). It is journaled in the session of the base URL and changes nothing in either.",
    fix: "Use the credentials of the session whose base_url the integration calls (POST /__sandbox/sessions answers both), or call the base_url of the session the credentials belong to.",
  },
  // Routing, method, size, media type, removal.
  not_found: {
    status: [404],
    error: ["not_found"],
    meaning:
      "No such endpoint (the message lists the routes and hints at near misses), no such session, no such merchant (token minting), or the control plane is off.",
    fix: "Check the path against the list in the message (no trailing slash, version 2), the session id, or turn the control plane on.",
  },
  session_url_unknown: {
    status: [404],
    error: ["not_found"],
    meaning:
      "A request under `/s/{session_id}/…` whose session does not exist: it was deleted, reaped after being idle, reset away with the sandbox, or never created.",
    fix: "Create a session with POST /__sandbox/sessions and configure the integration with the `base_url` it answers.",
  },
  method_not_allowed: {
    status: [405],
    error: ["method_not_allowed"],
    meaning: "The endpoint does not take this method; `Allow` lists the ones it does.",
    fix: "Use a method the `Allow` header lists.",
  },
  payload_too_large: {
    status: [413],
    error: ["payload_too_large"],
    meaning: "The body is over the limit (64 KiB by default, `maxBodyBytes`).",
    fix: "Send a smaller body (64 KiB by default).",
  },
  unsupported_media_type: {
    status: [415],
    error: ["unsupported_media_type"],
    meaning: "A body that is not declared as JSON (`Content-Type: application/json` or `application/*+json`) where JSON is required.",
    fix: "Send the body as JSON with `Content-Type: application/json`.",
  },
  login_invalid_credentials: {
    status: [401],
    error: ["invalid_client"],
    meaning:
      'The deprecated login\'s e-mail is unknown, its password wrong, its merchant disabled, or a scenario rule rejected it. The default answer is Lexik\'s own body `{"code": 401, "message": "Invalid credentials."}`; a response profile shapes it as its other refusals.',
    fix: "Send the e-mail and password of a loaded merchant's login, or move to POST /api/v2/auth/token.",
  },
  login_gone: {
    status: [410],
    error: ["gone"],
    meaning: "POST /api/login_check has been removed (`--login-mode gone`, or a scenario's `login_gone` action).",
    fix: "Move to POST /api/v2/auth/token.",
  },
  // Simulated by scenario rules, and faults.
  rate_limited: {
    status: [429],
    error: ["rate_limited"],
    meaning: "Simulated by a scenario rule's `respond: {status: 429}` (with `Retry-After` when the rule gives `retry_after`).",
    fix: "Wait `Retry-After` seconds before retrying.",
  },
  service_unavailable: {
    status: [503],
    error: ["temporarily_unavailable"],
    meaning: "Simulated by a scenario rule's `respond: {status: 503}` (with `Retry-After` when the rule gives `retry_after`).",
    fix: "Retry later, after `Retry-After` seconds when given, with backoff.",
  },
  scenario_fault: {
    status: [500],
    error: ["server_error"],
    meaning:
      "A scenario rule, a session action or a response profile cannot do what it says: a response template that cannot be filled, or one whose answer renders past the bound of one answer (262,144 characters: a placeholder printed too often).",
    fix: "Fix the scenario rule, session action or profile the message names.",
  },
  internal_error: {
    status: [500],
    error: ["server_error"],
    meaning: "A bug in merchant-sandbox, not in the request.",
    fix: "Report it: the server log has the details.",
  },
  // Control plane.
  admin_token_required: {
    status: [401],
    error: ["invalid_token"],
    meaning:
      'The control plane was started with an admin token, and the request lacks it or sends a wrong one. Without any token the challenge is a bare `WWW-Authenticate: Bearer realm="merchant-api"` (RFC 6750 §3.1); a wrong one\'s says `error="invalid_token"`.',
    fix: "Send `Authorization: Bearer <admin token>` or `X-Admin-Token`, with the token the sandbox was started with.",
  },
  host_not_allowed: {
    status: [403],
    error: ["access_denied"],
    meaning:
      "The control plane does not answer to this Host (DNS rebinding); allow a name with --allowed-hosts. Localhost, IP addresses and single-label names are always allowed.",
    fix: "Call the sandbox by localhost or an IP address, or allow the name with --allowed-hosts.",
  },
  cross_site_request: {
    status: [403],
    error: ["access_denied"],
    meaning:
      "A control-plane request from a web page: an Origin other than the sandbox's own, `Origin: null`, or `Sec-Fetch-Site: cross-site`. Call it from a script or CI.",
    fix: "Call the control plane from a script or CI, not from a web page.",
  },
  control_json_required: {
    status: [415],
    error: ["unsupported_media_type"],
    meaning: "A control-plane POST without `Content-Type: application/json` (an empty body needs it too), so a web page cannot send it unasked.",
    fix: "Send `Content-Type: application/json` with every control-plane POST, even with an empty body.",
  },
  state_unavailable: {
    status: [503],
    error: ["temporarily_unavailable"],
    meaning:
      "The shared state store (`--state redis://…`) did not answer in time, or the request lost the race for the state it changes too often in a row. The replica answers nothing from memory instead: it fails closed, and its health check answers 503 until the store is back.",
    fix: "Retry after the `Retry-After` seconds. If it lasts, check that the store is up and reachable from every replica (`redis-cli -u <url> ping`).",
  },
  too_many_sessions: {
    status: [429],
    error: ["rate_limited"],
    meaning: "The sandbox holds as many sessions as it may (`--max-sessions`).",
    fix: "Delete finished sessions (DELETE /__sandbox/sessions/{id}), or raise --max-sessions.",
  },
  too_many_subscribers: {
    status: [429],
    error: ["rate_limited"],
    meaning: "The sandbox streams events (GET /__sandbox/events) to as many clients as it may (`maxEventSubscribers`).",
    fix: "Close event streams you no longer read, or raise --max-event-subscribers.",
  },
  unknown_field: {
    status: [400],
    error: ["invalid_request"],
    meaning: "A control-plane body has a field the endpoint does not take.",
    fix: "Remove the field; the message lists the ones the endpoint takes.",
  },
  unknown_parameter: {
    status: [400],
    error: ["invalid_request"],
    meaning: "GET /__sandbox/requests with a query parameter it does not take.",
    fix: "Remove the parameter; the message lists the ones the endpoint takes.",
  },
  limit_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`limit` is not a whole number from 1 to 1000.",
    fix: "Send `limit` as a whole number from 1 to 1000 (the default); read more in pages with `since`.",
  },
  since_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`since` is neither a request id (`req_12`) nor an ISO time.",
    fix: "Send `since` as a request id (`req_12`) or an ISO time.",
  },
  session_scenario_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`scenario` is not a string.",
    fix: "Send `scenario` as a string.",
  },
  session_scenario_unknown: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`scenario` names no loaded or library scenario.",
    fix: "Name a loaded or library scenario (`merchant-sandbox scenarios` lists them).",
  },
  session_profile_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`profile` is not a string, names no profile of this sandbox, or the scenario's profile file has a problem (the message says where).",
    fix: "Name a built-in profile (oauth, lexik, spring, laravel, camel, envelope) or one this sandbox loaded at start.",
  },
  session_action_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning:
      "POST /__sandbox/sessions/{id}/actions with a body the actions schema refuses (an unknown key, with the nearest allowed one and the list; a value of the wrong kind; neither `now` nor `next`; a per-request action under `now`), or a `merchant` that is not the session's. Nothing was changed.",
    fix: "Fix what the message lists: `now` takes the state-changing actions of a scenario rule's `then`, `next` takes `times` (1 to 1000), `endpoint` and a `then`.",
  },
  session_action_rules_full: {
    status: [429],
    error: ["rate_limited"],
    meaning: "The session already holds as many pending `next` rules as it may (100); nothing was changed.",
    fix: "Wait for its `next` rules to be spent, or reset the session (POST /__sandbox/sessions/{id}/reset).",
  },
  clock_change_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning: "A clock change with none of `advance`, `set`, `freeze`.",
    fix: "Send `advance`, `set` or `freeze`.",
  },
  clock_set_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`set` is not an ISO 8601 time.",
    fix: "Send `set` as an ISO 8601 time, e.g. `2026-01-01T00:00:00Z`.",
  },
  clock_out_of_range: {
    status: [400],
    error: ["invalid_request"],
    meaning: "The change would move the clock outside years 0001 to 9999; the clock is left as it was.",
    fix: "Keep the clock between years 0001 and 9999.",
  },
  clock_advance_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`advance` is not a duration (`90s`, `59m`, `-5m`) or a number of seconds.",
    fix: "Send `advance` as a duration (`90s`, `59m`, `-5m`) or a number of seconds.",
  },
  clock_freeze_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`freeze` is not a boolean.",
    fix: "Send `freeze` as true or false.",
  },
  mint_field_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`merchant` or `variant` is not a string.",
    fix: "Send `merchant` and `variant` as strings.",
  },
  mint_variant_unknown: {
    status: [400],
    error: ["invalid_request"],
    meaning: "`variant` is not one of the catalogue's (an allow-list: names such as `constructor` are refused too); the message lists them.",
    fix: "Use a variant the message lists.",
  },
  mint_ttl_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning:
      "`ttl` is not a duration or a number of seconds, or is under 1 s or over ten years (for an already expired token use variant `expired`).",
    fix: "Send `ttl` between 1 s and ten years; for an expired token use variant `expired`.",
  },
  scan_text_missing: {
    status: [400],
    error: ["invalid_request"],
    meaning: "POST /__sandbox/scan without `text`.",
    fix: "Send the log lines as `text`.",
  },
  scan_text_invalid: {
    status: [400],
    error: ["invalid_request"],
    meaning: "POST /__sandbox/scan with a `text` that is not a string.",
    fix: "Send `text` as a string.",
  },
} as const satisfies Record<string, CatalogueEntry>;

/** Any other error status a scenario rule's `respond` scripts without a body: `simulated_<status>`. */
export const SIMULATED_CODE = {
  pattern: "^simulated_[1-5][0-9]{2}$",
  meaning: "Any other error status a scenario rule's `respond` scripts without a body, e.g. `simulated_502`.",
  fix: "Expected when the scenario scripts it: check how the integration reacts.",
} as const;

export type CatalogueCode = keyof typeof ERROR_CATALOGUE;
export type ErrorCode = CatalogueCode | `simulated_${number}`;

type Entry<C extends CatalogueCode> = (typeof ERROR_CATALOGUE)[C];
/** The codes the catalogue answers with one of `statuses` and the OAuth error `error`: what each error class takes. */
export type CodeWith<Statuses extends number, Error extends OAuthError> = {
  [C in CatalogueCode]: [Statuses & Entry<C>["status"][number]] extends [never] ? never : Error extends Entry<C>["error"][number] ? C : never;
}[CatalogueCode];

export const CATALOGUE_CODES = Object.keys(ERROR_CATALOGUE) as CatalogueCode[];

/** The catalogue entry of a code, `simulated_<status>` included (its status is in its name). */
export function catalogueEntry(code: ErrorCode): CatalogueEntry {
  if (Object.hasOwn(ERROR_CATALOGUE, code)) return ERROR_CATALOGUE[code as CatalogueCode];
  const status = Number(code.slice("simulated_".length));
  return { status: [status], error: status >= 500 ? ["server_error"] : [], meaning: SIMULATED_CODE.meaning, fix: SIMULATED_CODE.fix };
}

/** The problem `type` of a code (RFC 9457 §3.1.1): a URN, stable as the code is. */
export function problemType(code: ErrorCode): string {
  return `urn:merchant-sandbox:problem:${code}`;
}

/** The reason phrase of each status a refusal can have, the problem's `title`. */
export const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  410: "Gone",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  417: "Expectation Failed",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};
