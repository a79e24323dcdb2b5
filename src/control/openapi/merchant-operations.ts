import type { ErrorCode } from "../../core/error-catalogue.js";
import type { Method, OperationDoc, PathDoc, Refusal } from "./operations.js";
import { ref } from "./ref.js";

/**
 * The prose of the merchant API's paths as the sandbox simulates them (the routes of
 * src/endpoints/merchant-routes.ts): the token exchange, the two protected groups (any method, any
 * path under the prefix), the hosted payment, the public keys, and the deprecated login. The
 * refusal responses are generated from the codes listed here and the error catalogue (operations.ts).
 */

const BODY: readonly ErrorCode[] = ["body_malformed_json", "body_not_object", "body_not_utf8"];
const BEARER_HEADER: readonly ErrorCode[] = [
  "authorization_not_bearer",
  "bearer_token_empty",
  "bearer_token_malformed",
  "authorization_header_repeated",
];
const SIZE_AND_TYPE: readonly ErrorCode[] = ["method_not_allowed", "payload_too_large", "unsupported_media_type"];
const noStore = { "Cache-Control": ref("headers", "Cache-Control-NoStore"), "X-Sandbox-Rule": ref("headers", "X-Sandbox-Rule") };

const tokenOperation: OperationDoc = {
  operationId: "exchangeCredentials",
  summary: "Exchange api_key and api_secret for an access token",
  description:
    "Each credential comes from the JSON body or its header (X-Api-Key, X-Api-Secret), independently: key in a header and secret in the body is fine. A credential sent both ways must match (precedence setting). The merchant (by api_key) selects its scenario, whose rules may script outages, rate limits, rotated secrets or pre-expired tokens. Validation order: method, size, media type, body, credentials, merchant, secret, merchant state.",
  security: [{ ApiKeyHeader: [], ApiSecretHeader: [] }, { ApiKeyHeader: [] }, { ApiSecretHeader: [] }, {}],
  requestBody: {
    required: false,
    description: "Optional when both credentials come as headers. Must be declared as JSON when present.",
    content: { "application/json": { schema: ref("schemas", "TokenRequest") } },
  },
  responses: {
    "200": {
      description: "An access token (RFC 6749 §5.1). Renew it before `expires_in` runs out: there is no refresh token.",
      headers: { ...noStore, Pragma: ref("headers", "Pragma") },
      content: {
        "application/json": {
          schema: ref("schemas", "TokenResponse"),
          example: { access_token: "eyJhbGciOiJSUzI1NiIsImtpZCI6Ij…", token_type: "Bearer", expires_in: 3600 },
        },
      },
    },
  },
  refusals: [
    "api_key_missing",
    "api_secret_missing",
    "credential_conflict",
    "credential_sent_twice",
    "credential_not_string",
    "credential_header_repeated",
    ...BODY,
    "unknown_api_key",
    "wrong_api_secret",
    "credentials_rejected",
    "merchant_disabled",
    ...SIZE_AND_TYPE,
  ],
  notes: {
    400: "A credential is missing or empty (the message names both ways to send it), sent twice with different values, not a string, or the JSON body is malformed or not an object.",
    401: "Unknown api_key, wrong api_secret, a disabled merchant (unless the setting makes that 403), or credentials a scenario rule rejects.",
    403: "A disabled merchant, with `--disabled-merchant-status 403`.",
  },
};

/** On a group's 200 when the deprecated login's token authorised it (the `loginToken` setting). */
const loginTokenHeaders = {
  Deprecation: ref("headers", "Deprecation"),
  Sunset: ref("headers", "Sunset"),
  Link: ref("headers", "Link"),
};

/** What every method of a protected group refuses. */
const GROUP_REFUSALS: readonly Refusal[] = [
  ...BEARER_HEADER,
  "token_in_query",
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
  ["merchant_disabled", 401],
  "insufficient_scope",
  "payload_too_large",
  "method_not_allowed",
];

const groupDescription = (scope: "payment" | "cashout") =>
  `GET, POST, PUT, PATCH, DELETE, HEAD and OPTIONS on /api/v2/${scope} and on every path under it, at any depth ({path} stands for one or more segments), all alike; HEAD answers as GET without the body. Any other method (TRACE, CONNECT, WebDAV's …) is refused with 405 and \`Allow\`. Authorised by the access token with the '${scope}' scope. The deprecated login's token (typ JWT, from POST /api/login_check) is accepted too, with its merchant's rights, unless the setting \`loginToken\` is \`refused\` (\`--login-token refused\`, a scenario's \`login_token: refused\`), which answers it 401 \`token_not_access_token\`; a call it authorises answers with the login's Deprecation, Sunset and Link headers. Business behaviour is not simulated: an authenticated call answers a placeholder naming the merchant, operation, scope and token id. The body is ignored, except that it may not exceed the size limit.`;

/** One operation of a protected group: the same contract for every method. */
function groupOperation(scope: "payment" | "cashout", method: Method): OperationDoc {
  const withBody = method === "post" || method === "put" || method === "patch";
  return {
    operationId: `${scope}${method[0]!.toUpperCase()}${method.slice(1)}`,
    summary: `${method.toUpperCase()} /api/v2/${scope}/… with the access token`,
    description: groupDescription(scope),
    security: [{ AccessToken: [scope] }],
    ...(withBody && {
      requestBody: { required: false, description: "Not read (business payloads are not simulated).", content: { "*/*": { schema: {} } } },
    }),
    responses: {
      "200": {
        description:
          "Authenticated: the placeholder. Deprecation, Sunset and Link only when the deprecated login's token authorised the call (the login's own headers: move to POST /api/v2/auth/token).",
        headers: { ...noStore, ...loginTokenHeaders },
        content: { "application/json": { schema: ref("schemas", "ProtectedPlaceholder") } },
      },
    },
    refusals: GROUP_REFUSALS,
    notes: {
      400: "The Authorization header is not Bearer, empty, malformed or repeated, or a token was sent in the query string.",
      401: "No credentials (bare challenge, no `error`), or an access token that is expired, revoked, tampered, foreign, of the wrong kind (the payment token, the login's JWT with `--login-token refused`, a JWE) or whose merchant was disabled. The description says which and how to recover: get a new token from POST /api/v2/auth/token.",
      403: "A valid access token without the group's scope (e.g. a merchant with payment rights only, on cashout). The challenge names the scope.",
      405: "A method other than the seven listed (TRACE, CONNECT, WebDAV's …): `Allow` lists them.",
    },
  };
}

function groupPath(scope: "payment" | "cashout"): PathDoc {
  const methods: Method[] = ["get", "post", "put", "patch", "delete", "head", "options"];
  return {
    tag: "Merchant API",
    scripted: true,
    challenge: { header: "WWW-Authenticate-Bearer", statuses: [400, 401, 403] },
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
    operations: Object.fromEntries(methods.map((m) => [m, groupOperation(scope, m)])),
  };
}

const deprecationHeaders = { ...loginTokenHeaders, ...noStore };

/**
 * Every merchant path is served at the root and under each session's base URL, `/s/{session_id}`
 * (path-level `servers`). Under a base URL two more refusals can answer: the session does not exist
 * (404 `session_url_unknown`), and, where credentials are read, they are another merchant's (401
 * `session_credentials_mismatch`: problem+json, on the login too).
 */
const SESSION_SERVERS = [
  { url: "/", description: "The sandbox's root: a request belongs to the merchant (and so the scenario or session) its credentials name." },
  {
    url: "/s/{session_id}",
    description:
      "A session's base_url (POST /__sandbox/sessions answers it): every request under it belongs to that session whatever its credentials (none, in the query, mistyped paths), and shows in its journal and report. An unknown or ended session answers 404 `session_url_unknown`; another merchant's credentials 401 `session_credentials_mismatch`.",
    variables: { session_id: { default: "ses_0123456789abcdef", description: "The session id from POST /__sandbox/sessions." } },
  },
];
const MISMATCH_NOTE =
  "Under a session's base URL: credentials of another session's merchant, or of one outside any session (`session_credentials_mismatch`).";
const UNKNOWN_NOTE =
  "Under a session's base URL (`/s/{session_id}`): the session does not exist, it was deleted, reaped after being idle or never created (`session_url_unknown`). Create one with POST /__sandbox/sessions and use its base_url.";

export const merchantDocs: Record<string, PathDoc> = underSessionBaseUrls({
  "/api/v2/auth/token": {
    tag: "Merchant API",
    scripted: true,
    challenge: { header: "WWW-Authenticate-ApiKey", statuses: [401, 403] },
    operations: { post: tokenOperation },
  },
  "/api/v2/payment/init": {
    tag: "Merchant API",
    scripted: true,
    challenge: { header: "WWW-Authenticate-Bearer", statuses: [400, 401] },
    operations: {
      post: {
        operationId: "initHostedPayment",
        summary: "Start a hosted payment with the merchant payment token",
        description:
          "Authorised by the merchant payment token, NOT the JWT access token: sending the JWT here is the mistake integrations make most, and the 401 explains the two tokens. This exact path takes precedence over the payment group. Answers a seeded payment id and a checkout URL that leads nowhere (hosted checkout is not simulated). As on the groups, a token in the query string (`?access_token=`, `token`, `jwt`, `bearer`) is refused 400 `token_in_query`: it ends up in logs and browser history.",
        security: [{ PaymentToken: [] }],
        requestBody: {
          required: false,
          description:
            "Optional and open. Read only when declared as JSON (`application/json` or `application/*+json`): then it must be a JSON object (400 otherwise). A body of any other type, or without a Content-Type, is not read at all, whatever it holds, so nothing of it is echoed; except with the `body:<field>` transport, which requires JSON (415 otherwise).",
          content: {
            "application/json": {
              schema: ref("schemas", "PaymentInitRequest"),
              example: { amount: 1999, currency: "EUR", order_id: "order-42" },
            },
            "*/*": { schema: {} },
          },
        },
        responses: {
          "201": {
            description: "The payment was created; `Location` points to its (placeholder) resource in the payment group.",
            headers: { Location: ref("headers", "Location"), ...noStore },
            content: { "application/json": { schema: ref("schemas", "PaymentInitResponse") } },
          },
        },
        refusals: [
          ...BEARER_HEADER,
          "token_in_query",
          "payment_token_header_repeated",
          "payment_token_not_string",
          ...BODY,
          "credentials_missing",
          "credentials_rejected",
          "access_token_on_payment_init",
          "payment_token_unknown",
          "payment_token_expired",
          "payment_token_revoked",
          ["merchant_disabled", 401],
          ...SIZE_AND_TYPE,
        ],
        notes: {
          400: "A token in the query string (`token_in_query`), the Authorization header is malformed (with a Bearer challenge), the payment token header is repeated or the body field is not a string (header/body transports), or a body declared as JSON does not parse or is not an object.",
          401: "No payment token, the JWT access token instead of it (`access_token_on_payment_init`: the message explains the two tokens), an unknown, expired or revoked payment token, or a disabled merchant's.",
        },
      },
    },
  },
  "/api/v2/payment/{path}": groupPath("payment"),
  "/api/v2/cashout/{path}": groupPath("cashout"),
  "/.well-known/jwks.json": {
    tag: "Merchant API",
    scripted: true,
    operations: {
      get: {
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
              "X-Sandbox-Rule": ref("headers", "X-Sandbox-Rule"),
            },
            content: { "application/json": { schema: ref("schemas", "Jwks") } },
          },
        },
        refusals: ["method_not_allowed"],
      },
    },
  },
  "/api/login_check": {
    tag: "Deprecated",
    deprecated: true,
    scripted: true,
    headers: deprecationHeaders,
    operations: {
      post: {
        operationId: "loginCheck",
        summary: "Deprecated e-mail and password login (Symfony / LexikJWT)",
        description:
          "Deprecated for integrations: use POST /api/v2/auth/token. Every answer, refusals included, carries Deprecation (RFC 9745), Sunset (RFC 8594) and a Link to the successor. Its token has `typ: JWT`; the payment and cashout groups accept it (their 200 then carries these three headers too) unless `--login-token refused` (or a scenario's `login_token: refused`) makes them refuse it with `token_not_access_token`, a message that points to /api/v2/auth/token. With `--login-mode gone` (or a scenario's `login_gone`) it answers 410 to every method.",
        security: [],
        requestBody: { required: true, content: { "application/json": { schema: ref("schemas", "LoginRequest") } } },
        responses: {
          "200": {
            description: "Logged in.",
            headers: deprecationHeaders,
            content: { "application/json": { schema: ref("schemas", "LoginResponse") } },
          },
          "401": {
            description:
              "Unknown e-mail, wrong password, a disabled merchant, or a login a scenario rule rejects: Lexik's own body, not problem+json.",
            headers: deprecationHeaders,
            content: { "application/json": { schema: ref("schemas", "LexikError") } },
          },
        },
        refusals: ["login_body_missing", "login_username_missing", "login_password_missing", ...BODY, ...SIZE_AND_TYPE, "login_gone"],
        notes: {
          400: "No body, no username/email, no password, or malformed JSON.",
          405: "Another method.",
          410: "The login has been removed (`gone` mode).",
          413: "The body is over the limit.",
          415: "A body that is not declared as JSON.",
        },
      },
    },
  },
});

function underSessionBaseUrls(docs: Record<string, PathDoc>): Record<string, PathDoc> {
  return Object.fromEntries(
    Object.entries(docs).map(([path, doc]) => [
      path,
      {
        ...doc,
        servers: SESSION_SERVERS,
        // Every path reads credentials but the JWKS.
        operations: Object.fromEntries(
          Object.entries(doc.operations).map(([m, op]) => [m, underSessionBaseUrl(op, path !== "/.well-known/jwks.json")]),
        ),
      },
    ]),
  );
}

function underSessionBaseUrl(op: OperationDoc, readsCredentials: boolean): OperationDoc {
  const notes: Partial<Record<number, string>> = { ...op.notes, 404: UNKNOWN_NOTE };
  if (readsCredentials && notes[401] !== undefined) notes[401] = `${notes[401]} ${MISMATCH_NOTE}`;
  const withMismatch = readsCredentials && op.responses["401"] === undefined;
  return {
    ...op,
    refusals: [...op.refusals, "session_url_unknown", ...(withMismatch ? (["session_credentials_mismatch"] as const) : [])],
    notes,
    responses: readsCredentials && !withMismatch ? withProblem401(op.responses) : op.responses,
  };
}

/**
 * The login's 401 is written out (Lexik's own body); the mismatch under a base URL is problem+json
 * beside it, with the same schema as a generated refusal.
 */
function withProblem401(responses: Record<string, object>): Record<string, object> {
  const written = responses["401"] as { description: string; content?: Record<string, object> };
  const problem = {
    schema: {
      allOf: [
        ref("schemas", "ProblemDetails"),
        {
          type: "object",
          properties: { status: { const: 401 }, error: { const: "invalid_client" }, code: { enum: ["session_credentials_mismatch"] } },
        },
      ],
    },
  };
  return { ...responses, "401": { ...written, content: { ...written.content, "application/problem+json": problem } } };
}
