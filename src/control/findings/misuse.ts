import { endpointLabel, perRequest, plural, subject, type Check } from "./common.js";

/**
 * Findings where one request is the mistake: the wrong token on the wrong endpoint, the deprecated
 * login, credentials in the URL, credentials sent twice, no credentials at all, another session's credentials.
 */

/** The JWT access token sent to payment/init, which takes the merchant payment token. */
export const jwtOnPaymentInit: Check = perRequest(
  "jwt_on_payment_init",
  "error",
  (e) => e.code === "access_token_on_payment_init",
  (m, hits) =>
    `${subject(m)} sent the JWT access token to POST /api/v2/payment/init (${plural(hits.length, "request")}). payment/init is authorised by the merchant payment token (the long-lived opaque token configured per merchant), not by the token from POST /api/v2/auth/token: send the payment token there.`,
);

/** The merchant payment token sent where the JWT access token is needed. */
export const paymentTokenOnBearerEndpoint: Check = perRequest(
  "payment_token_on_bearer_endpoint",
  "error",
  (e) => e.code === "payment_token_not_accepted",
  (m, hits) =>
    `${subject(m)} sent the merchant payment token to a /api/v2/payment/ or /api/v2/cashout/ endpoint (${plural(hits.length, "request")}). Those endpoints need the access token from POST /api/v2/auth/token as 'Authorization: Bearer <access token>'; use the payment token only for POST /api/v2/payment/init.`,
);

/**
 * Any use of POST /api/login_check, and of its token on payment or cashout (accepted or refused by
 * the `loginToken` setting): an integration that works only because the login still answers.
 */
export const deprecatedLoginUsed: Check = perRequest(
  "deprecated_login_used",
  "warning",
  (e) => e.endpoint === "login" || e.loginToken === true,
  (m, hits) => {
    const logins = hits.filter((e) => e.endpoint === "login").length;
    const tokenCalls = hits.length - logins;
    const used = [
      ...(logins > 0 ? [`used the deprecated POST /api/login_check (${plural(logins, "request")})`] : []),
      ...(tokenCalls > 0
        ? [
            `sent ${logins > 0 ? "its" : "the deprecated POST /api/login_check's"} token to payment or cashout endpoints (${plural(tokenCalls, "request")})`,
          ]
        : []),
    ].join(" and ");
    const instead = tokenCalls > 0 ? " and send that access token instead" : " instead";
    return `${subject(m)} ${used}. It will be switched off (see its Deprecation and Sunset headers): exchange api_key and api_secret at POST /api/v2/auth/token${instead}.`;
  },
);

/** A token or secret in the query string. */
export const credentialsInQuery: Check = perRequest(
  "credentials_in_query",
  "error",
  (e) => e.code === "token_in_query" || e.secretInQuery === true,
  (m, hits) =>
    `${subject(m)} put a token or secret in the query string (${plural(hits.length, "request")}), where it ends up in server logs, proxies and browser history. Send the access token as 'Authorization: Bearer <token>' and api_key/api_secret in the JSON body or the X-Api-Key/X-Api-Secret headers, never in the URL.`,
);

/** The same credential both in the body and in a header. */
export const conflictingCredentials: Check = perRequest(
  "conflicting_credentials",
  "warning",
  (e) =>
    e.code === "credential_conflict" ||
    e.code === "credential_sent_twice" ||
    e.credentialSources?.apiKey === "both" ||
    e.credentialSources?.apiSecret === "both",
  (m, hits) =>
    `${subject(m)} sent api_key or api_secret both in the JSON body and in the X-Api-Key/X-Api-Secret header (${plural(hits.length, "request")}). Send each credential one way only, the JSON body or the header, so a stale copy can never conflict with the real one.`,
);

/**
 * The refusal codes of a request without the credentials its endpoint takes: a bare 401 on the
 * groups and on payment/init, `api_key_missing` on the token endpoint (checked first, so also when
 * only the secret came, or HTTP Basic: neither is what the endpoint takes), `login_body_missing` on
 * the login.
 */
const NO_CREDENTIALS: ReadonlySet<string> = new Set(["credentials_missing", "api_key_missing", "login_body_missing"]);

/** What each endpoint needs, for the missing_credentials message. */
function neededOn(endpoint: string): string {
  switch (endpoint) {
    case "token":
      return "POST /api/v2/auth/token needs api_key and api_secret, as JSON body fields (Content-Type: application/json) or as the X-Api-Key and X-Api-Secret headers.";
    case "payment-init":
      return "POST /api/v2/payment/init needs the merchant payment token (not the access token), sent as its 401 answer says.";
    case "login":
      return "POST /api/login_check needs a JSON body with username and password (better: move to POST /api/v2/auth/token).";
    default:
      return "Calls to /api/v2/payment/ and /api/v2/cashout/ need 'Authorization: Bearer <access token>', with the access token from POST /api/v2/auth/token.";
  }
}

/** Calls with no credentials at all: an integration that never sends them cannot work. */
export const missingCredentials: Check = perRequest(
  "missing_credentials",
  "error",
  (e) => e.code !== undefined && NO_CREDENTIALS.has(e.code),
  (m, hits) => {
    const perEndpoint = new Map<string, number>();
    for (const e of hits) perEndpoint.set(e.endpoint, (perEndpoint.get(e.endpoint) ?? 0) + 1);
    const parts = [...perEndpoint].map(([endpoint, n]) => `${n} to ${endpointLabel(endpoint)}`);
    const needs = [...new Set([...perEndpoint.keys()].map(neededOn))];
    return `${subject(m)} sent ${plural(hits.length, "request")} without the credentials the endpoint takes (${parts.join(", ")}). ${needs.join(" ")}`;
  },
);

/** Under a session's base URL, the credentials of another session (or of a merchant of no session). */
export const credentialsOfOtherSession: Check = perRequest(
  "credentials_of_other_session",
  "error",
  (e) => e.code === "session_credentials_mismatch",
  (m, hits) =>
    `${subject(m)} sent the credentials of another session, or of a merchant outside this session, to this session's base_url (${plural(hits.length, "request")}, refused 401 session_credentials_mismatch). Under a session's base_url use only the credentials POST /__sandbox/sessions answered for that session, and the tokens issued to them; give each test job its own session.`,
);
