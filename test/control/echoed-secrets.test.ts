import { BUILT_IN_NAMES } from "../../src/profiles/builtins.js";
import { beforeAll, describe, expect, it } from "vitest";
import { redact } from "../../src/core/redact.js";
import {
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  postJson,
  problem,
  type Reply,
  requestWithRepeatedHeaders,
  serverPerDescribe,
  type TestServer,
} from "../support/server.js";

/**
 * No secret in clear in a refusal that quotes the request (issue 23 §8): every value a refusal
 * echoes (a path segment, a body's key or value, a header) is redacted before it is shortened, in
 * one place (core/echo.ts, through problem.ts's asRefusal). One row per echo point, each planted
 * with every kind of secret; the next surface that quotes a request adds a row.
 */

const ADMIN_TOKEN = "admin-token-0123456789abcdef";
const PASSWORD = "sandbox-password";

const server = serverPerDescribe({ adminToken: ADMIN_TOKEN });
const admin = { "x-admin-token": ADMIN_TOKEN };
let jwt = "";
let session = "";

beforeAll(async () => {
  const t = server();
  jwt = await t.token();
  const r = await t.call("/__sandbox/sessions", postJson({}, admin));
  session = r.json.id;
});

/** Each kind of secret the sandbox holds, by name: the value is read when the row runs (the JWT is issued first). */
const SECRETS: Array<[string, () => string]> = [
  ["a merchant's api_secret", () => DEFAULT_SECRET],
  ["a merchant's login password", () => PASSWORD],
  ["a merchant's payment token", () => DEFAULT_PAYMENT_TOKEN],
  ["a JWT the sandbox issued", () => jwt],
  ["the admin token", () => ADMIN_TOKEN],
];

const BROWSER_FIX =
  "a page open in your browser could otherwise reset the sandbox or read every session. Call the control plane from a script, a test or CI (curl, fetch in Node), not from a web page.";
const ACTIONS_TAIL = `They take a scenario rule's actions: "now" the state changes, "next" {"times", "endpoint", "then"}.`;
const ENDPOINTS = "token, login, payment, cashout, payment-init, jwks, any";
const LIBRARY =
  "cashout-without-scope, default, login-gone, merchant-disabled, payment-token-expired, secret-rotated, server-clock-ahead, server-clock-behind, short-lived-tokens, signing-key-rotation, signing-key-rotation-overlap, slow-token-endpoint, token-connection-dropped, token-endpoint-outage, token-expires-after-calls, token-rate-limited, token-revoked-mid-session";
/** A secret that reads like a scenario name is looked for in the library, whose refusal suggests the nearest name (of the secret as sent). */
const LIBRARY_SUGGESTS: Record<string, string> = {
  [DEFAULT_SECRET]: " (did you mean 'secret-rotated'?)",
  [DEFAULT_PAYMENT_TOKEN]: " (did you mean 'payment-token-expired'?)",
};

interface EchoPoint {
  /** Where the request's text is echoed. */
  surface: string;
  send(t: TestServer, secret: string): Promise<Reply>;
  /** The exact answer when the secret shows as `shown` (its redaction). */
  answer(shown: string, t: TestServer, secret: string): ReturnType<typeof problem>;
}

const ECHO_POINTS: EchoPoint[] = [
  {
    surface: "the QA page's file name (GET /__sandbox/ui/<file>)",
    send: (t, secret) => t.call(`/__sandbox/ui/${secret}`),
    answer: (shown) =>
      problem(
        404,
        "Not Found",
        "not_found",
        `The QA page has no file '${shown}': it serves index.html, app.js, app.css. Open /__sandbox/ui/ in a browser.`,
        `/__sandbox/ui/${shown}`,
        "not_found",
      ),
  },
  {
    surface: "a session's scenario",
    send: (t, secret) => t.call("/__sandbox/sessions", postJson({ scenario: secret }, admin)),
    answer: (shown, _t, secret) =>
      problem(
        400,
        "Bad Request",
        "session_scenario_unknown",
        /^[a-z0-9][a-z0-9-]*$/.test(secret)
          ? `no scenario named '${shown}' in the library${LIBRARY_SUGGESTS[secret] ?? ""}; use a file path, or one of: ${LIBRARY}.`
          : `'${shown}' is not a scenario name; use a loaded scenario or a library name such as 'token-endpoint-outage' (files are loaded with serve --scenario).`,
        "/__sandbox/sessions",
        "invalid_request",
      ),
  },
  {
    surface: "a session's profile",
    send: (t, secret) => t.call("/__sandbox/sessions", postJson({ profile: secret }, admin)),
    answer: (shown) =>
      problem(
        400,
        "Bad Request",
        "session_profile_invalid",
        `"profile": '${shown}' is not a profile of this sandbox; use one of: ${BUILT_IN_NAMES.join(", ")}`,
        "/__sandbox/sessions",
        "invalid_request",
      ),
  },
  {
    surface: "an unknown field's name",
    send: (t, secret) => t.call("/__sandbox/sessions", postJson({ [secret]: 1 }, admin)),
    answer: (shown) =>
      problem(
        400,
        "Bad Request",
        "unknown_field",
        `POST /__sandbox/sessions does not take '${shown}'; it takes 'scenario', 'profile'.`,
        "/__sandbox/sessions",
        "invalid_request",
      ),
  },
  {
    surface: "the session actions' unknown key",
    send: (t, secret) => t.call(`/__sandbox/sessions/${session}/actions`, postJson({ now: { [secret]: true } }, admin)),
    answer: (shown) =>
      problem(
        400,
        "Bad Request",
        "session_action_invalid",
        `The session actions are not valid, so nothing was changed: now.${shown}: unknown key '${shown}' (allowed here: disable_merchant, enable_merchant, rotate_secret, revoke_token, expire_token, rotate_signing_key, expire_payment_token, revoke_payment_token, login_gone, advance_clock, set_state). ${ACTIONS_TAIL}`,
        `/__sandbox/sessions/${session}/actions`,
        "invalid_request",
      ),
  },
  {
    surface: "the session actions' next.endpoint",
    send: (t, secret) =>
      t.call(`/__sandbox/sessions/${session}/actions`, postJson({ next: { times: 1, endpoint: secret, then: { respond: { status: 503 } } } }, admin)),
    answer: (shown) =>
      problem(
        400,
        "Bad Request",
        "session_action_invalid",
        `The session actions are not valid, so nothing was changed: next.endpoint: '${shown}' is not an endpoint (use one of: ${ENDPOINTS}). ${ACTIONS_TAIL}`,
        `/__sandbox/sessions/${session}/actions`,
        "invalid_request",
      ),
  },
  {
    surface: "a template placeholder of the session actions' respond.body",
    send: (t, secret) =>
      t.call(
        `/__sandbox/sessions/${session}/actions`,
        postJson({ next: { times: 1, then: { respond: { status: 200, body: { a: `{{${secret}}}` } } } } }, admin),
      ),
    answer: (shown) =>
      problem(
        400,
        "Bad Request",
        "session_action_invalid",
        `The session actions are not valid, so nothing was changed: next.then.respond.body.a: '{{${shown}}}' is not a known placeholder; use request.method, request.path, request.query, merchant.id, merchant.api_key, scenario.name, scenario.state, rule.name, now or faker.<module>.<generator>. ${ACTIONS_TAIL}`,
        `/__sandbox/sessions/${session}/actions`,
        "invalid_request",
      ),
  },
  {
    surface: "the minted token's variant",
    send: (t, secret) => t.call("/__sandbox/tokens", postJson({ variant: secret }, admin)),
    answer: (shown) =>
      problem(
        400,
        "Bad Request",
        "mint_variant_unknown",
        `variant '${shown}' is not known; use one of: valid, expired, not_yet_valid, wrong_audience, wrong_issuer, unknown_kid, foreign_key, alg_none, bad_signature, login_token.`,
        "/__sandbox/tokens",
        "invalid_request",
      ),
  },
  {
    surface: "the minted token's merchant",
    send: (t, secret) => t.call("/__sandbox/tokens", postJson({ merchant: secret }, admin)),
    answer: (shown) =>
      problem(
        404,
        "Not Found",
        "not_found",
        `No merchant with api_key or id '${shown}'. Use a loaded merchant's api_key (see GET /__sandbox/health and merchant-sandbox scenarios) or a session's.`,
        "/__sandbox/tokens",
        "not_found",
      ),
  },
  {
    surface: "the Host header",
    send: (t, secret) => requestWithRepeatedHeaders(t.url, "/__sandbox/sessions", { host: `${secret}.example`, ...admin }),
    answer: (shown) =>
      problem(
        403,
        "Forbidden",
        "host_not_allowed",
        `The control plane does not answer to Host '${shown}.example': a web page can point a name it owns at this machine (DNS rebinding) and read every session's secrets through it. Call the sandbox by localhost, an IP address or a single-label name (a docker or CI service name such as 'sandbox'), or allow this name with --allowed-hosts ${shown}.example (MERCHANT_SANDBOX_ALLOWED_HOSTS, createSandbox({ allowedHosts })).`,
        "/__sandbox/sessions",
        "access_denied",
      ),
  },
  {
    surface: "the Origin header",
    send: (t, secret) => t.call("/__sandbox/sessions", { headers: { origin: `http://${secret}.example`, ...admin } }),
    answer: (shown, t) =>
      problem(
        403,
        "Forbidden",
        "cross_site_request",
        `The control plane refuses requests from web pages: Origin 'http://${shown}.example' is not the sandbox's own (this sandbox is ${t.url}); ${BROWSER_FIX}`,
        "/__sandbox/sessions",
        "access_denied",
      ),
  },
  {
    surface: "the Content-Type header",
    send: (t, secret) => requestWithRepeatedHeaders(t.url, "/__sandbox/reset", { "content-type": `text/${secret}`, ...admin }, { method: "POST" }),
    answer: (shown, t) =>
      problem(
        415,
        "Unsupported Media Type",
        "control_json_required",
        `POST on the control plane needs 'Content-Type: application/json', even with an empty body (the request has Content-Type: text/${shown}): that keeps web pages, which can send forms and text unasked, from changing the sandbox. With curl: curl -X POST -H 'content-type: application/json' ${t.url}/__sandbox/reset`,
        "/__sandbox/reset",
        "unsupported_media_type",
      ),
  },
  {
    surface: "the token endpoint's Content-Type header (a merchant route)",
    send: (t, secret) =>
      requestWithRepeatedHeaders(t.url, "/api/v2/auth/token", { "content-type": `text/${secret}` }, { method: "POST", body: "{}" }),
    answer: (shown) =>
      problem(
        415,
        "Unsupported Media Type",
        "unsupported_media_type",
        `POST /api/v2/auth/token takes a JSON body, but the request says Content-Type: text/${shown}. Send the body as JSON with the header 'Content-Type: application/json'.`,
        "/api/v2/auth/token",
        "unsupported_media_type",
      ),
  },
];

describe("no secret in clear in an echo of the request: each echo point, each kind of secret", () => {
  const rows = ECHO_POINTS.flatMap((point) => SECRETS.map(([kind, secret]) => ({ point, kind, secret })));
  it.each(rows)("redacted echo: $point.surface shows $kind redacted", async ({ point, secret }) => {
    const t = server();
    const value = secret();
    const r = await point.send(t, value);
    const expected = point.answer(redact(value), t, value);
    expect(r.json).toEqual(expected);
    expect(r.status).toBe(expected.status);
    expect(r.text).not.toContain(value);
    for (const [name, header] of r.headers) expect(header, name).not.toContain(value);
  });
});
