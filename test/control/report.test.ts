import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/control/journal.js";
import { analyze, type Finding } from "../../src/control/report.js";
import {
  DEFAULT_KEY,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  T0,
  postJson,
  type Reply,
  type TestServer,
  serversPerTest,
} from "../support/server.js";

/**
 * The integration report (docs/control-plane.md and docs/findings.md): scripted clients that each make one mistake
 * with real HTTP against the real server, and the finding the report names for it; well-behaved
 * clients that get no finding at all; and analyze() on hand-built journals for the edge cases.
 * The sandbox clock is frozen at T0 and moved, never slept on.
 */

// ---------------------------------------------------------------------------------------------
// harness

const startServer = serversPerTest();
/** A server for the current test, with these scenarios loaded. */
const start = (scenarios: string[] = []) => startServer(scenarios.length ? { scenarios } : {});

interface Creds {
  merchant: string;
  apiKey: string;
  apiSecret: string;
  paymentToken: string;
}

const DEFAULT: Creds = { merchant: DEFAULT_MERCHANT_ID, apiKey: DEFAULT_KEY, apiSecret: DEFAULT_SECRET, paymentToken: DEFAULT_PAYMENT_TOKEN };

/** The credentials of a library scenario's merchant (as in scenarios/<name>.yaml). */
function libraryCreds(name: string): Creds {
  return { merchant: `m_${name.replace(/-/g, "_")}`, apiKey: `${name}-key`, apiSecret: `${name}-secret`, paymentToken: `${name}-payment-token` };
}

/** A session of a scenario over the control API, and its merchant's fresh credentials. */
async function createSession(t: TestServer, scenario: string): Promise<{ id: string; creds: Creds }> {
  const r = await t.call("/__sandbox/sessions", postJson({ scenario }));
  expect(r.status).toBe(201);
  const m = r.json.merchant;
  return { id: r.json.id, creds: { merchant: m.id, apiKey: m.api_key, apiSecret: m.api_secret, paymentToken: m.payment_token } };
}

function exchange(t: TestServer, c: Creds): Promise<Reply> {
  return t.call("/api/v2/auth/token", postJson({ api_key: c.apiKey, api_secret: c.apiSecret }));
}

function payment(t: TestServer, token: string, path = "/api/v2/payment/status"): Promise<Reply> {
  return t.call(path, { headers: { authorization: `Bearer ${token}` } });
}

function paymentInit(t: TestServer, token: string): Promise<Reply> {
  return t.call("/api/v2/payment/init", postJson({ amount: 1999, currency: "EUR" }, { authorization: `Bearer ${token}` }));
}

/** The ids of the journal, oldest first (GET /__sandbox/requests). */
async function requestIds(t: TestServer, filter = ""): Promise<string[]> {
  const r = await t.call(`/__sandbox/requests${filter}`);
  expect(r.status).toBe(200);
  return (r.json.requests as Array<{ id: string }>).map((e) => e.id);
}

async function merchantReport(t: TestServer, merchant: string): Promise<Finding[]> {
  const r = await t.call(`/__sandbox/report?merchant=${encodeURIComponent(merchant)}`);
  expect(r.status).toBe(200);
  return r.json.findings;
}

async function fullReport(t: TestServer): Promise<Finding[]> {
  const r = await t.call("/__sandbox/report");
  expect(r.status).toBe(200);
  return r.json.findings;
}

async function sessionReport(t: TestServer, session: string): Promise<Finding[]> {
  const r = await t.call(`/__sandbox/sessions/${session}/report`);
  expect(r.status).toBe(200);
  expect(r.json.session).toBe(session);
  return r.json.findings;
}

// ---------------------------------------------------------------------------------------------
// the expected findings, word for word

const m = (id: string) => `Merchant '${id}'`;
const NOBODY = "A client the sandbox could not attribute to a merchant";

const expected = {
  unprovenIdentity: (merchant: string, requests: string, evidence: string[]): Finding => ({
    code: "unproven_identity",
    severity: "info",
    message: `${requests} named merchant '${merchant}' without proving it (a wrong api_secret or password, a token that no key of this sandbox signed, or a request refused for its form: its method, Content-Type, body, or a credential sent two ways). They fired none of its scenario rules and count in none of its findings. If they are your integration's, check the credentials it sends and how (each refusal says what was wrong): use the merchant's current api_secret and the access_token exactly as issued.`,
    evidence,
  }),
  tokenPerCall: (who: string, tokens: number, calls: number, evidence: string[]): Finding => ({
    code: "token_per_call",
    severity: "warning",
    message: `${who} got ${tokens} new access tokens for ${calls} protected calls. Get one token from POST /api/v2/auth/token, cache it and reuse it for every call until shortly before it expires (expires_in), instead of asking for a new one per call.`,
    evidence,
  }),
  expiredTokenReused: (who: string, codes: string, evidence: string[]): Finding => ({
    code: "expired_token_reused",
    severity: "error",
    message: `${who} presented an access token again after it had been refused (${codes}). When a call gets 401 invalid_token, drop the cached token, get a new one from POST /api/v2/auth/token and retry once with it; never send the refused token again.`,
    evidence,
  }),
  noProactiveRenewal: (who: string, evidence: string[]): Finding => ({
    code: "no_proactive_renewal",
    severity: "warning",
    message: `${who} renewed its access token only after a call failed with 401 token_expired. Keep the token's expiry (expires_in from the token response) and get a new token shortly before it runs out, for example when 90% of its lifetime has passed, so that no call fails on an expired token.`,
    evidence,
  }),
  jwtOnPaymentInit: (who: string, requests: string, evidence: string[]): Finding => ({
    code: "jwt_on_payment_init",
    severity: "error",
    message: `${who} sent the JWT access token to POST /api/v2/payment/init (${requests}). payment/init is authorised by the merchant payment token (the long-lived opaque token configured per merchant), not by the token from POST /api/v2/auth/token: send the payment token there.`,
    evidence,
  }),
  paymentTokenOnBearerEndpoint: (who: string, requests: string, evidence: string[]): Finding => ({
    code: "payment_token_on_bearer_endpoint",
    severity: "error",
    message: `${who} sent the merchant payment token to a /api/v2/payment/ or /api/v2/cashout/ endpoint (${requests}). Those endpoints need the access token from POST /api/v2/auth/token as 'Authorization: Bearer <access token>'; use the payment token only for POST /api/v2/payment/init.`,
    evidence,
  }),
  deprecatedLoginUsed: (who: string, requests: string, evidence: string[]): Finding => ({
    code: "deprecated_login_used",
    severity: "warning",
    message: `${who} used the deprecated POST /api/login_check (${requests}). It will be switched off (see its Deprecation and Sunset headers): exchange api_key and api_secret at POST /api/v2/auth/token instead.`,
    evidence,
  }),
  credentialsInQuery: (who: string, requests: string, evidence: string[]): Finding => ({
    code: "credentials_in_query",
    severity: "error",
    message: `${who} put a token or secret in the query string (${requests}), where it ends up in server logs, proxies and browser history. Send the access token as 'Authorization: Bearer <token>' and api_key/api_secret in the JSON body or the X-Api-Key/X-Api-Secret headers, never in the URL.`,
    evidence,
  }),
  conflictingCredentials: (who: string, requests: string, evidence: string[]): Finding => ({
    code: "conflicting_credentials",
    severity: "warning",
    message: `${who} sent api_key or api_secret both in the JSON body and in the X-Api-Key/X-Api-Secret header (${requests}). Send each credential one way only, the JSON body or the header, so a stale copy can never conflict with the real one.`,
    evidence,
  }),
  retryIgnoresRetryAfter: (
    who: string,
    early: string,
    status: number,
    retryAfter: number,
    endpoint: string,
    waited: number,
    evidence: string[],
  ): Finding => ({
    code: "retry_ignores_retry_after",
    severity: "error",
    message: `${who} retried before Retry-After had passed (${early}; after a ${status} with Retry-After: ${retryAfter} on ${endpoint} it called again ${waited} s later on the sandbox clock). Wait at least the Retry-After seconds before calling that endpoint again, and back off exponentially when an error carries no Retry-After.`,
    evidence,
  }),
  hammeringAfterError: (who: string, count: number, endpoints: string, evidence: string[]): Finding => ({
    code: "hammering_after_error",
    severity: "error",
    message: `${who} sent ${count} failing requests in quick succession to ${endpoints} (3 or more in a row refused or answered 429/503, each less than 2 s after the previous one on the sandbox clock). Do not resend a refused request unchanged: fix the request or the credentials first; retry 429, 503 and dropped connections with exponential backoff and jitter, honouring Retry-After, and give up after a few attempts.`,
    evidence,
  }),
  missingCredentials: (who: string, requests: string, perEndpoint: string, needs: Array<keyof typeof NEEDS>, evidence: string[]): Finding => ({
    code: "missing_credentials",
    severity: "error",
    message: `${who} sent ${requests} without the credentials the endpoint takes (${perEndpoint}). ${needs.map((n) => NEEDS[n]).join(" ")}`,
    evidence,
  }),
  credentialsOfOtherSession: (who: string, requests: string, evidence: string[]): Finding => ({
    code: "credentials_of_other_session",
    severity: "error",
    message: `${who} sent the credentials of another session, or of a merchant outside this session, to this session's base_url (${requests}, refused 401 session_credentials_mismatch). Under a session's base_url use only the credentials POST /__sandbox/sessions answered for that session, and the tokens issued to them; give each test job its own session.`,
    evidence,
  }),
  /** `wrongPaths`: each distinct wrong path as the message names it; `listed`: the API's routes are listed (a path matched none). */
  wrongBasePath: (who: string, paths: string, requests: string, wrongPaths: string[], listed: boolean, evidence: string[]): Finding => ({
    code: "wrong_base_path",
    severity: "error",
    message: `${who} called ${paths} the API does not serve (${requests}): ${wrongPaths.join("; ")}.${listed ? API_SERVES : ""} Configure the integration's base URL as the session's base_url (without a session: the sandbox's root URL), with no path of its own: the integration appends /api/v2/... to it.`,
    evidence,
  }),
};

/** What missing_credentials says each endpoint needs, word for word. */
const NEEDS = {
  bearer:
    "Calls to /api/v2/payment/ and /api/v2/cashout/ need 'Authorization: Bearer <access token>', with the access token from POST /api/v2/auth/token.",
  token:
    "POST /api/v2/auth/token needs api_key and api_secret, as JSON body fields (Content-Type: application/json) or as the X-Api-Key and X-Api-Secret headers.",
  paymentInit: "POST /api/v2/payment/init needs the merchant payment token (not the access token), sent as its 401 answer says.",
  login: "POST /api/login_check needs a JSON body with username and password (better: move to POST /api/v2/auth/token).",
};

const API_SERVES =
  " The API serves: POST /api/v2/auth/token, ANY /api/v2/payment/*, POST /api/v2/payment/init, ANY /api/v2/cashout/*, POST /api/login_check, GET /.well-known/jwks.json.";

// ---------------------------------------------------------------------------------------------
// misbehaving clients, one mistake each

describe("the report names each mistake of a misbehaving client", () => {
  it("token_per_call: a new token before every call", async () => {
    const t = await start();
    // The mistake: no token cache at all.
    for (let i = 0; i < 3; i++) {
      const token = (await exchange(t, DEFAULT)).json.access_token as string;
      expect((await payment(t, token)).status).toBe(200);
    }
    expect(await requestIds(t)).toEqual(["req_1", "req_2", "req_3", "req_4", "req_5", "req_6"]);
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([expected.tokenPerCall(m(DEFAULT_MERCHANT_ID), 3, 3, ["req_1", "req_3", "req_5"])]);
    // The library operation agrees with the HTTP one.
    expect(t.sandbox.report({ merchant: DEFAULT_MERCHANT_ID })).toEqual(await merchantReport(t, DEFAULT_MERCHANT_ID));
  });

  it("expired_token_reused: the expired token sent again after its 401", async () => {
    const t = await start();
    const token = await t.token(); // req_1
    t.sandbox.clock.advance(3601_000);
    // The mistake: a 401 token_expired is treated as a passing glitch and the same token is resent.
    const first = await payment(t, token); // req_2
    const again = await payment(t, token); // req_3
    expect([first.json.code, again.json.code]).toEqual(["token_expired", "token_expired"]);
    const entries = t.sandbox.journal.list();
    expect(entries.map((e) => [e.id, e.presentedTokenId])).toEqual([
      ["req_1", undefined],
      ["req_2", entries[0]!.tokenId],
      ["req_3", entries[0]!.tokenId],
    ]);
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([
      expected.expiredTokenReused(m(DEFAULT_MERCHANT_ID), "token_expired", ["req_2", "req_3"]),
    ]);
  });

  it("expired_token_reused: the revoked token sent again (token-revoked-mid-session, in a session)", async () => {
    const t = await start();
    const { id, creds } = await createSession(t, "token-revoked-mid-session");
    const token = (await exchange(t, creds)).json.access_token as string; // req_1
    expect((await payment(t, token)).status).toBe(200); // req_2
    expect((await payment(t, token)).json.code).toBe("token_revoked"); // req_3: the scenario revokes it
    expect((await payment(t, token, "/api/v2/payment/refund")).json.code).toBe("token_revoked"); // req_4: resent
    expect(await requestIds(t, `?session=${id}`)).toEqual(["req_1", "req_2", "req_3", "req_4"]);
    expect(await sessionReport(t, id)).toEqual([expected.expiredTokenReused(m(creds.merchant), "token_revoked", ["req_3", "req_4"])]);
  });

  it("no_proactive_renewal: renews only once a call failed with token_expired (short-lived-tokens)", async () => {
    const t = await start(["short-lived-tokens"]);
    const c = libraryCreds("short-lived-tokens");
    let token = (await exchange(t, c)).json.access_token as string; // req_1, expires_in 60
    expect((await payment(t, token)).status).toBe(200); // req_2
    // Time passes through the token's renewal window (54 s to 60 s): the clock reads 55 s on the
    // way. One jump over the whole window would be the test's doing, which no client could see.
    t.sandbox.clock.advance(55_000);
    t.sandbox.clock.advance(6_000);
    // The mistake: the cached token is used past expires_in, renewed only on the 401.
    expect((await payment(t, token)).json.code).toBe("token_expired"); // req_3
    token = (await exchange(t, c)).json.access_token as string; // req_4
    expect((await payment(t, token)).status).toBe(200); // req_5
    expect(await requestIds(t)).toHaveLength(5);
    expect(await merchantReport(t, c.merchant)).toEqual([expected.noProactiveRenewal(m(c.merchant), ["req_3", "req_4"])]);
  });

  it("jwt_on_payment_init: the access token sent to payment/init", async () => {
    const t = await start();
    const token = await t.token(); // req_1
    // The mistake: one token for everything.
    expect((await paymentInit(t, token)).json.code).toBe("access_token_on_payment_init"); // req_2
    expect((await paymentInit(t, DEFAULT_PAYMENT_TOKEN)).status).toBe(201); // req_3, after reading the message
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([expected.jwtOnPaymentInit(m(DEFAULT_MERCHANT_ID), "1 request", ["req_2"])]);
  });

  it("payment_token_on_bearer_endpoint: the payment token sent to a JWT endpoint", async () => {
    const t = await start();
    // The mistake: the long-lived payment token used as if it were the access token.
    expect((await payment(t, DEFAULT_PAYMENT_TOKEN)).json.code).toBe("payment_token_not_accepted"); // req_1
    expect(
      (await t.call("/api/v2/cashout/transfer", { method: "POST", headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` } })).json.code,
    ).toBe("payment_token_not_accepted"); // req_2
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([
      expected.paymentTokenOnBearerEndpoint(m(DEFAULT_MERCHANT_ID), "2 requests", ["req_1", "req_2"]),
    ]);
  });

  it("deprecated_login_used: POST /api/login_check instead of the token exchange", async () => {
    const t = await start();
    const login = await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" })); // req_1
    expect(login.status).toBe(200);
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([expected.deprecatedLoginUsed(m(DEFAULT_MERCHANT_ID), "1 request", ["req_1"])]);
  });

  it("deprecated_login_used cites the payment calls made with the login's token too (accepted by default)", async () => {
    const t = await start();
    const login = await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" })); // req_1
    expect((await payment(t, login.json.token)).status).toBe(200); // req_2
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([
      {
        code: "deprecated_login_used",
        severity: "warning",
        message: `${m(DEFAULT_MERCHANT_ID)} used the deprecated POST /api/login_check (1 request) and sent its token to payment or cashout endpoints (1 request). It will be switched off (see its Deprecation and Sunset headers): exchange api_key and api_secret at POST /api/v2/auth/token and send that access token instead.`,
        evidence: ["req_1", "req_2"],
      },
    ]);
  });

  it("credentials_in_query: the token in the URL (with and without the header)", async () => {
    const t = await start();
    const token = await t.token(); // req_1
    // The mistake: the token appended to the URL as well as sent in the header …
    const both = await t.call(`/api/v2/payment/status?access_token=${token}`, { headers: { authorization: `Bearer ${token}` } }); // req_2
    expect(both.json.code).toBe("token_in_query");
    // … and a secret in the token endpoint's URL (the body has it too, so the exchange works).
    const secretInUrl = await t.call(
      `/api/v2/auth/token?api_secret=${DEFAULT_SECRET}`,
      postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }),
    ); // req_3
    expect(secretInUrl.status).toBe(200);
    // … and only in the URL: a sandbox key signed it, so it is still the merchant's (issue 13) …
    expect((await t.call(`/api/v2/payment/status?token=${token}`)).json.code).toBe("token_in_query"); // req_4
    // … but a token no sandbox key signed says nothing about who sent it.
    const unsigned = `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ sub: DEFAULT_MERCHANT_ID })).toString("base64url")}.`;
    expect((await t.call(`/api/v2/payment/status?token=${unsigned}`)).json.code).toBe("token_in_query"); // req_5
    const journal = t.sandbox.journal.list();
    expect(journal.map((e) => [e.id, e.secretInQuery, e.merchant])).toEqual([
      ["req_1", undefined, DEFAULT_MERCHANT_ID],
      ["req_2", true, DEFAULT_MERCHANT_ID],
      ["req_3", true, DEFAULT_MERCHANT_ID],
      ["req_4", true, DEFAULT_MERCHANT_ID],
      ["req_5", true, undefined],
    ]);
    expect(journal.map((e) => e.query).join(" ")).not.toContain(DEFAULT_SECRET);
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([
      expected.credentialsInQuery(m(DEFAULT_MERCHANT_ID), "3 requests", ["req_2", "req_3", "req_4"]),
    ]);
    expect(await fullReport(t)).toEqual([
      expected.credentialsInQuery(m(DEFAULT_MERCHANT_ID), "3 requests", ["req_2", "req_3", "req_4"]),
      expected.credentialsInQuery(NOBODY, "1 request", ["req_5"]),
    ]);
  });

  it("conflicting_credentials: the same credential in the body and in a header", async () => {
    const t = await start();
    const body = { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET };
    // The mistake: a stale secret left in a header while the body has the new one …
    const conflict = await t.call("/api/v2/auth/token", postJson(body, { "x-api-key": DEFAULT_KEY, "x-api-secret": "old-secret" })); // req_1
    expect(conflict.json.code).toBe("credential_conflict");
    // … and, even when they agree, both ways at once.
    expect((await t.call("/api/v2/auth/token", postJson(body, { "x-api-key": DEFAULT_KEY }))).status).toBe(200); // req_2
    expect(t.sandbox.journal.list()[1]!.credentialSources).toEqual({ apiKey: "both", apiSecret: "body" });
    // The conflict is refused for its form before its credentials count: it only names the
    // merchant (refused request changes nothing), so the finding cites the request that got through.
    expect(t.sandbox.journal.list()[0]!.unverified).toBe(true);
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([
      expected.conflictingCredentials(m(DEFAULT_MERCHANT_ID), "1 request", ["req_2"]),
      expected.unprovenIdentity(DEFAULT_MERCHANT_ID, "1 request", ["req_1"]),
    ]);
  });

  it("retry_ignores_retry_after: immediate retries after 429 Retry-After: 10 (token-rate-limited)", async () => {
    const t = await start(["token-rate-limited"]);
    const c = libraryCreds("token-rate-limited");
    expect((await exchange(t, c)).status).toBe(200); // req_1
    // The mistake: a retry loop that ignores Retry-After.
    const limited = await exchange(t, c); // req_2
    expect([limited.status, limited.headers.get("retry-after")]).toEqual([429, "10"]);
    expect((await exchange(t, c)).status).toBe(429); // req_3, 0 s later
    expect((await exchange(t, c)).status).toBe(200); // req_4, 0 s later
    expect(t.sandbox.journal.list().map((e) => e.retryAfter)).toEqual([undefined, 10, 10, undefined]);
    expect(await merchantReport(t, c.merchant)).toEqual([
      expected.retryIgnoresRetryAfter(m(c.merchant), "2 early retries", 429, 10, "POST /api/v2/auth/token", 0, ["req_2", "req_3", "req_4"]),
    ]);
  });

  it("retry_ignores_retry_after: a fixed 5 s retry against 503 Retry-After: 30 (token-endpoint-outage, in a session)", async () => {
    const t = await start();
    const { id, creds } = await createSession(t, "token-endpoint-outage");
    const down = await exchange(t, creds); // req_1
    expect([down.status, down.headers.get("retry-after")]).toEqual([503, "30"]);
    // The mistake: its own fixed delay instead of the server's.
    expect((await t.call(`/__sandbox/sessions/${id}/clock`, postJson({ advance: "5s" }))).status).toBe(200);
    expect((await exchange(t, creds)).status).toBe(503); // req_2
    t.sandbox.clock.advance(30_000);
    expect((await exchange(t, creds)).status).toBe(200); // req_3, 30 s later: fine
    const times = t.sandbox.journal.list({ session: id }).map((e) => e.sandboxTime);
    expect(times).toEqual(["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:05.000Z", "2026-01-01T00:00:35.000Z"]);
    expect(await sessionReport(t, id)).toEqual([
      expected.retryIgnoresRetryAfter(m(creds.merchant), "1 early retry", 503, 30, "POST /api/v2/auth/token", 5, ["req_1", "req_2"]),
    ]);
  });

  it("hammering_after_error: the same refused exchange three times in a row", async () => {
    const t = await start(["merchant-disabled"]);
    const c = libraryCreds("merchant-disabled");
    expect((await exchange(t, c)).status).toBe(200); // req_1: the scenario disables the merchant after it
    // The mistake: a refused exchange retried in a tight loop, by the merchant itself (its secret is right).
    for (let i = 0; i < 3; i++) {
      expect((await exchange(t, c)).json.code).toBe("merchant_disabled"); // req_2..4
      t.sandbox.clock.advance(500);
    }
    expect(await merchantReport(t, c.merchant)).toEqual([
      expected.hammeringAfterError(m(c.merchant), 3, "POST /api/v2/auth/token", ["req_2", "req_3", "req_4"]),
    ]);
  });

  it("regression: unverified identities: wrong secrets that only name a merchant are info, never an error that fails the gate", async () => {
    const t = await start();
    for (let i = 0; i < 3; i++) {
      expect((await exchange(t, { ...DEFAULT, apiSecret: "wrong-secret" })).json.code).toBe("wrong_api_secret"); // req_1..3
      t.sandbox.clock.advance(500);
    }
    const entries = t.sandbox.journal.list();
    expect(entries.map((e) => [e.merchant, e.unverified])).toEqual([
      [DEFAULT_MERCHANT_ID, true],
      [DEFAULT_MERCHANT_ID, true],
      [DEFAULT_MERCHANT_ID, true],
    ]);
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([
      expected.unprovenIdentity(DEFAULT_MERCHANT_ID, "3 requests", ["req_1", "req_2", "req_3"]),
    ]);
  });

  it("missing_credentials: a protected call with no credentials at all", async () => {
    const t = await start();
    // The mistake: the Authorization header never set.
    const r = await t.call("/api/v2/payment/status"); // req_1
    expect([r.status, r.json.code]).toEqual([401, "credentials_missing"]);
    // Nothing on the request says who sent it, so only the unfiltered report can show it.
    expect(t.sandbox.journal.list()[0]!.merchant).toBeUndefined();
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([]);
    expect(await fullReport(t)).toEqual([expected.missingCredentials(NOBODY, "1 request", "1 to /api/v2/payment/*", ["bearer"], ["req_1"])]);
  });

  it("missing_credentials: no credentials at all on the token endpoint, payment/init and payment (an error: it fails the gate)", async () => {
    const t = await start();
    // The mistake: credentials never configured, so none are sent anywhere.
    expect((await t.call("/api/v2/auth/token", postJson({}))).json.code).toBe("api_key_missing"); // req_1
    expect((await t.call("/api/v2/payment/init", postJson({ amount: 1999, currency: "EUR" }))).json.code).toBe("credentials_missing"); // req_2
    t.sandbox.clock.advance(5_000);
    expect((await t.call("/api/v2/cashout/transfer", { method: "POST" })).json.code).toBe("credentials_missing"); // req_3
    expect((await t.call("/api/v2/auth/token", postJson({}, { "x-api-key": "", "x-api-secret": "" }))).json.code).toBe("api_key_missing"); // req_4
    // A request that forgot only the secret sent credentials (the wrong ones): not this finding.
    expect((await t.call("/api/v2/auth/token", postJson({ api_key: DEFAULT_KEY }))).json.code).toBe("api_secret_missing"); // req_5
    expect(await fullReport(t)).toEqual([
      expected.missingCredentials(
        NOBODY,
        "4 requests",
        "2 to POST /api/v2/auth/token, 1 to POST /api/v2/payment/init, 1 to /api/v2/cashout/*",
        ["token", "paymentInit", "bearer"],
        ["req_1", "req_2", "req_3", "req_4"],
      ),
      expected.unprovenIdentity(DEFAULT_MERCHANT_ID, "1 request", ["req_5"]),
    ]);
  });

  it("wrong_base_path: a base URL with a path of its own, each wrong path named with the one meant; different paths are no hammering", async () => {
    const t = await start();
    // The mistake: the base URL configured as ".../api/v2" (the client adds /api/v2/... itself),
    // then two more guesses in quick succession (the clock stands still: 0 s apart).
    const body = { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET };
    expect((await t.call("/api/v2/api/v2/auth/token", postJson(body))).status).toBe(404); // req_1
    expect((await t.call("/api/v1/auth/token", postJson(body))).status).toBe(404); // req_2
    expect((await t.call("/v2/auth/token", postJson(body))).status).toBe(404); // req_3
    expect((await t.call("/api/v2/api/v2/auth/token", postJson(body))).status).toBe(404); // req_4
    // At the root and naming no merchant, a path meant for nothing of the API is not the integration's
    // (a browser's GET / or /favicon.ico): not counted, so it cannot fail the unfiltered gate.
    expect((await t.call("/nope/status")).status).toBe(404); // req_5
    expect((await t.call("/favicon.ico")).status).toBe(404); // req_6
    expect(t.sandbox.journal.list().map((e) => [e.endpoint, e.code, e.merchant])).toEqual(
      Array.from({ length: 6 }, () => ["unknown", "not_found", undefined]),
    );
    expect(await fullReport(t)).toEqual([
      expected.wrongBasePath(
        NOBODY,
        "3 paths",
        "4 requests",
        [
          "POST /api/v2/api/v2/auth/token (2 times): use /api/v2/auth/token",
          "POST /api/v1/auth/token: use /api/v2/auth/token",
          "POST /v2/auth/token: use /api/v2/auth/token",
        ],
        false,
        ["req_1", "req_2", "req_3", "req_4"],
      ),
    ]);
  });

  it("hammering_after_error: the same request three times in a row, not three requests to one endpoint", async () => {
    const t = await start();
    // Three different payment calls with no credentials, 0 s apart: missing credentials, not hammering …
    for (const path of ["/api/v2/payment/a", "/api/v2/payment/b", "/api/v2/payment/c"]) {
      expect((await t.call(path)).status).toBe(401); // req_1..3
    }
    expect(codes(await fullReport(t))).toEqual(["missing_credentials"]);
    // … the same one three times is both.
    for (let i = 0; i < 3; i++) expect((await t.call("/api/v2/payment/d")).status).toBe(401); // req_4..6
    expect(await fullReport(t)).toEqual([
      expected.missingCredentials(NOBODY, "6 requests", "6 to /api/v2/payment/*", ["bearer"], ["req_1", "req_2", "req_3", "req_4", "req_5", "req_6"]),
      expected.hammeringAfterError(NOBODY, 3, "/api/v2/payment/*", ["req_4", "req_5", "req_6"]),
    ]);
  });

  it("several mistakes at once: errors first, then warnings, each by its first request", async () => {
    const t = await start();
    await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" })); // req_1
    const token = await t.token(); // req_2
    await payment(t, DEFAULT_PAYMENT_TOKEN); // req_3
    await paymentInit(t, token); // req_4
    const findings = await merchantReport(t, DEFAULT_MERCHANT_ID);
    expect(findings.map((f) => [f.code, f.severity, f.evidence])).toEqual([
      ["payment_token_on_bearer_endpoint", "error", ["req_3"]],
      ["jwt_on_payment_init", "error", ["req_4"]],
      ["deprecated_login_used", "warning", ["req_1"]],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// a well-behaved client

/**
 * What an integration should do: one cached token, renewed when 90% of its lifetime has passed;
 * a 401 invalid_token drops the cache and is retried once with a new token; 429/503 wait for
 * Retry-After (by moving the sandbox clock); payment/init gets the payment token.
 */
class WellBehavedClient {
  private cached: { token: string; renewAt: number } | undefined;

  constructor(
    private readonly t: TestServer,
    private readonly creds: Creds,
  ) {}

  private now(): number {
    return this.t.sandbox.clock.now();
  }

  async accessToken(): Promise<string> {
    if (this.cached && this.now() < this.cached.renewAt) return this.cached.token;
    for (let attempt = 1; attempt <= 5; attempt++) {
      const r = await exchange(this.t, this.creds);
      if (r.status === 200) {
        this.cached = { token: r.json.access_token, renewAt: this.now() + r.json.expires_in * 900 };
        return this.cached.token;
      }
      const retryAfter = Number(r.headers.get("retry-after"));
      if (!(r.status === 429 || r.status === 503) || !Number.isFinite(retryAfter)) throw new Error(`token exchange failed: ${r.status}`);
      this.t.sandbox.clock.advance(retryAfter * 1000);
    }
    throw new Error("token endpoint still unavailable, giving up");
  }

  async call(path: string): Promise<Reply> {
    const r = await payment(this.t, await this.accessToken(), path);
    if (r.status !== 401 || r.json.error !== "invalid_token") return r;
    this.cached = undefined;
    return payment(this.t, await this.accessToken(), path);
  }

  initPayment(): Promise<Reply> {
    return paymentInit(this.t, this.creds.paymentToken);
  }

  /** A working day: calls, a hosted payment, time passing beyond the token's lifetime. */
  async run(ttlSeconds: number): Promise<void> {
    for (let step = 0; step < 4; step++) {
      expect((await this.call("/api/v2/payment/status")).status).toBe(200);
      expect((await this.call("/api/v2/payment/refund")).status).toBe(200);
      expect((await this.initPayment()).status).toBe(201);
      this.t.sandbox.clock.advance(ttlSeconds * 400); // 40% of the lifetime per step
    }
  }
}

describe("a well-behaved client gets no findings", () => {
  it("default scenario: one token reused, renewed before expiry, payment token on payment/init", async () => {
    const t = await start();
    await new WellBehavedClient(t, DEFAULT).run(3600);
    const entries = t.sandbox.journal.list();
    expect(entries.filter((e) => e.endpoint === "token")).toHaveLength(2); // the first token and one renewal
    expect(entries.every((e) => e.status < 400)).toBe(true);
    expect(await merchantReport(t, DEFAULT_MERCHANT_ID)).toEqual([]);
    expect(await fullReport(t)).toEqual([]);
  });

  it("short-lived-tokens: renews every 54 s instead of waiting for the 401", async () => {
    const t = await start(["short-lived-tokens"]);
    const c = libraryCreds("short-lived-tokens");
    await new WellBehavedClient(t, c).run(60);
    expect(await merchantReport(t, c.merchant)).toEqual([]);
  });

  it("token-endpoint-outage (session): waits for Retry-After on both 503s", async () => {
    const t = await start();
    const { id, creds } = await createSession(t, "token-endpoint-outage");
    await new WellBehavedClient(t, creds).run(3600);
    expect(
      t.sandbox.journal
        .list({ session: id })
        .slice(0, 3)
        .map((e) => [e.status, e.sandboxTime]),
    ).toEqual([
      [503, "2026-01-01T00:00:00.000Z"],
      [503, "2026-01-01T00:00:30.000Z"],
      [200, "2026-01-01T00:01:00.000Z"],
    ]);
    expect(await sessionReport(t, id)).toEqual([]);
  });

  it("token-rate-limited: waits for Retry-After on the 429s", async () => {
    const t = await start(["token-rate-limited"]);
    const c = libraryCreds("token-rate-limited");
    const client = new WellBehavedClient(t, c);
    await client.run(3600);
    expect(t.sandbox.journal.list().filter((e) => e.status === 429)).toHaveLength(2);
    expect(await merchantReport(t, c.merchant)).toEqual([]);
  });

  it("token-expires-after-calls and token-revoked-mid-session (sessions): renews once on the scripted 401", async () => {
    const t = await start();
    for (const scenario of ["token-expires-after-calls", "token-revoked-mid-session"]) {
      const { id, creds } = await createSession(t, scenario);
      await new WellBehavedClient(t, creds).run(3600);
      const codes = t.sandbox.journal.list({ session: id }).flatMap((e) => (e.code ? [e.code] : []));
      expect(codes).toEqual([scenario === "token-expires-after-calls" ? "token_expired" : "token_revoked"]);
      expect(await sessionReport(t, id)).toEqual([]);
    }
    expect(await fullReport(t)).toEqual([]);
  });
});

describe("false positive: a renewal the sandbox or the test forced is not held against the client", () => {
  it("a clock jump over the whole renewal window, and an expire_token: all, are journaled as forced: no finding", async () => {
    const t = await start();
    const { id, creds } = await createSession(t, "short-lived-tokens");
    const jump = () => t.call(`/__sandbox/sessions/${id}/clock`, postJson({ advance: "61s" }));
    let token = (await exchange(t, creds)).json.access_token as string; // req_1, expires_in 60
    expect((await payment(t, token)).status).toBe(200); // req_2
    expect((await jump()).status).toBe(200); // 0 s to 61 s: the client could not see it coming
    expect((await payment(t, token)).json.code).toBe("token_expired"); // req_3
    token = (await exchange(t, creds)).json.access_token as string; // req_4
    expect((await payment(t, token)).status).toBe(200); // req_5
    expect((await t.call(`/__sandbox/sessions/${id}/actions`, postJson({ now: { expire_token: "all" } }))).status).toBe(200);
    expect((await payment(t, token)).json.code).toBe("token_expired"); // req_6
    token = (await exchange(t, creds)).json.access_token as string; // req_7
    expect((await payment(t, token)).status).toBe(200); // req_8
    // A jump that starts inside the renewal window (55 s of 60) could have been seen coming.
    expect((await t.call(`/__sandbox/sessions/${id}/clock`, postJson({ advance: "55s" }))).status).toBe(200);
    expect((await payment(t, token)).status).toBe(200); // req_9
    expect((await t.call(`/__sandbox/sessions/${id}/clock`, postJson({ advance: "6s" }))).status).toBe(200);
    expect((await payment(t, token)).json.code).toBe("token_expired"); // req_10
    token = (await exchange(t, creds)).json.access_token as string; // req_11
    expect((await payment(t, token)).status).toBe(200); // req_12
    const journal = t.sandbox.journal.list({ session: id });
    expect(journal.filter((e) => e.code === "token_expired").map((e) => [e.id, e.tokenExpiry])).toEqual([
      ["req_3", "clock_jump"],
      ["req_6", "early"],
      ["req_10", undefined],
    ]);
    // Four tokens for seven calls, but three were renewals the sandbox called for: no token_per_call.
    expect(await sessionReport(t, id)).toEqual([expected.noProactiveRenewal(m(creds.merchant), ["req_10", "req_11"])]);
  });

  it("the sandbox clock's jump moves the sessions' clocks, and counts as a jump on each", async () => {
    const t = await start();
    const { id, creds } = await createSession(t, "default");
    const token = (await exchange(t, creds)).json.access_token as string; // req_1
    expect((await t.call("/__sandbox/clock", postJson({ advance: "61m" }))).status).toBe(200);
    expect((await payment(t, token)).json.code).toBe("token_expired"); // req_2
    await exchange(t, creds); // req_3
    expect(t.sandbox.journal.list({ session: id })[1]!.tokenExpiry).toBe("clock_jump");
    expect(await sessionReport(t, id)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// analyze() on hand-built journals

let seq = 0;
function entry(fields: Partial<JournalEntry> & { at?: number }): JournalEntry {
  const n = fields.seq ?? ++seq;
  const { at, ...rest } = fields;
  return {
    id: `req_${n}`,
    seq: n,
    time: new Date(T0).toISOString(),
    sandboxTime: new Date(T0 + (at ?? 0) * 1000).toISOString(),
    method: "GET",
    path: "/api/v2/payment/status",
    query: "",
    status: 200,
    durationMs: 1,
    endpoint: "payment",
    scenario: "default",
    merchant: "m1",
    ...rest,
  };
}
const exchanged = (jti: string, more: Partial<JournalEntry> & { at?: number } = {}) =>
  entry({ method: "POST", path: "/api/v2/auth/token", endpoint: "token", tokenId: jti, ...more });
const called = (jti: string, more: Partial<JournalEntry> & { at?: number } = {}) => entry({ presentedTokenId: jti, tokenId: jti, ...more });
const refused = (jti: string, code: string, more: Partial<JournalEntry> & { at?: number } = {}) =>
  entry({ status: 401, code, presentedTokenId: jti, ...more });
const codes = (findings: Finding[]) => findings.map((f) => f.code);

describe("analyze()", () => {
  afterEach(() => {
    seq = 0;
  });

  it("an empty journal has no findings", () => {
    expect(analyze([])).toEqual([]);
  });

  it("token_per_call: from 3 exchanges, at 1 exchange per 2 calls or more", () => {
    const pattern = (exchanges: number, calls: number) => {
      seq = 0;
      const out: JournalEntry[] = [];
      for (let i = 0; i < exchanges; i++) out.push(exchanged(`t${i}`));
      for (let i = 0; i < calls; i++) out.push(called("t0"));
      return codes(analyze(out));
    };
    expect(pattern(3, 6)).toEqual(["token_per_call"]);
    expect(pattern(3, 0)).toEqual(["token_per_call"]);
    expect(pattern(3, 7)).toEqual([]);
    expect(pattern(2, 2)).toEqual([]);
    // Failed exchanges are not tokens.
    seq = 0;
    expect(
      codes(analyze([exchanged("a"), exchanged("b"), entry({ endpoint: "token", status: 401, code: "wrong_api_secret" }), called("a")])),
    ).toEqual([]);
  });

  it("false positive: token_per_call does not count renewals a refusal for good or the token's age called for", () => {
    const expiring = (jti: string, at: number) => exchanged(jti, { at, tokenExpiresAt: new Date(T0 + (at + 60) * 1000).toISOString() });
    // Each token refused for good (expired, revoked, rotated key, disabled merchant), then renewed.
    const forced = ["token_expired", "token_revoked", "token_unknown_kid", "merchant_disabled"].flatMap((code, i) => [
      expiring(`t${i}`, 10 * i),
      refused(`t${i}`, code, { at: 10 * i }),
    ]);
    // (The token_expired one, renewed on its 401, is a missed proactive renewal; nothing else.)
    expect(codes(analyze([...forced, exchanged("last", { at: 40 }), called("last", { at: 40 })]))).toEqual(["no_proactive_renewal"]);
    seq = 0;
    // Renewed once half of each 60 s token's life had passed: a renewal, not a token per call.
    expect(analyze([expiring("a", 0), called("a", { at: 1 }), expiring("b", 30), called("b", { at: 31 }), expiring("c", 60)])).toEqual([]);
    seq = 0;
    // Renewed before that: each counts.
    expect(codes(analyze([expiring("a", 0), called("a", { at: 1 }), expiring("b", 29), called("b", { at: 30 }), expiring("c", 58)]))).toEqual([
      "token_per_call",
    ]);
  });

  it("expired_token_reused: only after a refusal that can never be undone, and per token", () => {
    expect(analyze([exchanged("a"), refused("a", "token_revoked"), called("b"), refused("a", "token_revoked")])).toEqual([
      expected.expiredTokenReused(m("m1"), "token_revoked", ["req_2", "req_4"]),
    ]);
    seq = 0;
    // A signature failure is not an expired token (and nothing else was resent).
    expect(
      analyze([
        refused("a", "token_signature_invalid", { at: 0 }),
        refused("a", "token_signature_invalid", { at: 5 }),
        refused("b", "token_expired", { at: 10 }),
      ]),
    ).toEqual([]);
    seq = 0;
    expect(codes(analyze([refused("a", "token_unknown_kid"), refused("a", "token_unknown_kid", { endpoint: "cashout" })]))).toEqual([
      "expired_token_reused",
    ]);
    seq = 0;
    const reused = analyze([
      refused("a", "merchant_disabled", { at: 0 }),
      refused("a", "merchant_disabled", { at: 5 }),
      refused("b", "token_expired", { at: 10 }),
      called("b", { at: 15 }),
    ]);
    expect(codes(reused)).toEqual(["expired_token_reused"]);
    expect(reused[0]!.message).toContain("(merchant_disabled, token_expired)");
  });

  it("no_proactive_renewal: not when a scenario rule expired the token, nor for a token the journal never saw issued", () => {
    expect(codes(analyze([exchanged("a"), refused("a", "token_expired"), exchanged("b")]))).toEqual(["no_proactive_renewal"]);
    seq = 0;
    expect(analyze([exchanged("a"), refused("a", "token_expired", { rules: ["s/expire"] }), exchanged("b")])).toEqual([]);
    seq = 0;
    expect(analyze([exchanged("a", { rules: ["s/issue-expired"] }), refused("a", "token_expired"), exchanged("b")])).toEqual([]);
    seq = 0;
    expect(analyze([refused("minted", "token_expired"), exchanged("b")])).toEqual([]);
    seq = 0;
    // The journal says the sandbox or the test forced the expiry.
    expect(analyze([exchanged("a"), refused("a", "token_expired", { tokenExpiry: "early" }), exchanged("b")])).toEqual([]);
    seq = 0;
    expect(analyze([exchanged("a"), refused("a", "token_expired", { tokenExpiry: "clock_jump" }), exchanged("b")])).toEqual([]);
    seq = 0;
    // Expired but never renewed: nothing to say about renewal.
    expect(analyze([exchanged("a"), refused("a", "token_expired")])).toEqual([]);
  });

  it("retry_ignores_retry_after: judged by the sandbox clock, per endpoint, only on 429/503", () => {
    const limited = (at: number, more: Partial<JournalEntry> = {}) =>
      entry({ endpoint: "token", status: 429, code: "rate_limited", retryAfter: 10, at, ...more });
    const ok = (at: number, endpoint = "token") => entry({ endpoint, at });
    expect(codes(analyze([limited(0), ok(9)]))).toEqual(["retry_ignores_retry_after"]);
    seq = 0;
    expect(analyze([limited(0), ok(10)])).toEqual([]);
    seq = 0;
    // Another endpoint in between is not a retry.
    expect(analyze([limited(0), ok(1, "payment"), ok(10)])).toEqual([]);
    seq = 0;
    // Retry-After on another status is not a back-off request.
    expect(analyze([limited(0, { status: 200, code: undefined }), ok(1)])).toEqual([]);
    seq = 0;
    expect(analyze([limited(0, { status: 503, retryAfter: 30 }), ok(29.5)])).toEqual([
      expected.retryIgnoresRetryAfter(m("m1"), "1 early retry", 503, 30, "POST /api/v2/auth/token", 29.5, ["req_1", "req_2"]),
    ]);
  });

  it("hammering_after_error: 3 failures in a row to one endpoint, each under 2 s after the last", () => {
    const fail = (at: number, endpoint = "token") => entry({ endpoint, status: 401, code: "wrong_api_secret", at });
    expect(codes(analyze([fail(0), fail(1), fail(2.9)]))).toEqual(["hammering_after_error"]);
    seq = 0;
    expect(analyze([fail(0), fail(2), fail(4)])).toEqual([]); // backing off
    seq = 0;
    expect(analyze([fail(0), fail(1), entry({ endpoint: "token", at: 1 }), fail(1), fail(1)])).toEqual([]); // a success breaks the run
    seq = 0;
    // Dropped connections count; another endpoint's failures do not join the run.
    const dropped = (at: number) => entry({ endpoint: "token", status: 0, at });
    expect(analyze([dropped(0), fail(0, "payment"), dropped(0), fail(0, "payment"), dropped(1), fail(0.5, "payment")])).toEqual([
      expected.hammeringAfterError(m("m1"), 6, "POST /api/v2/auth/token and /api/v2/payment/*", [
        "req_1",
        "req_2",
        "req_3",
        "req_4",
        "req_5",
        "req_6",
      ]),
    ]);
    seq = 0;
    // A long run is one finding with every request of it.
    expect(analyze([fail(0), fail(0), fail(0), fail(0), fail(0)])[0]!.evidence).toEqual(["req_1", "req_2", "req_3", "req_4", "req_5"]);
  });

  it("groups per merchant, names requests nobody can be attributed to, and sorts errors first then by first request", () => {
    const findings = analyze([
      entry({ merchant: "m2", endpoint: "login", path: "/api/login_check", method: "POST" }), // req_1
      entry({ merchant: undefined, status: 401, code: "credentials_missing" }), // req_2
      entry({ merchant: "m1", endpoint: "payment-init", status: 401, code: "access_token_on_payment_init" }), // req_3
      entry({ merchant: "m2", endpoint: "login", path: "/api/login_check", method: "POST" }), // req_4
      entry({ merchant: "m2", status: 400, code: "token_in_query", secretInQuery: true }), // req_5
      entry({ merchant: "m1", endpoint: "token", status: 400, code: "credential_sent_twice" }), // req_6
      entry({ merchant: "m1", endpoint: "payment-init", status: 401, code: "access_token_on_payment_init" }), // req_7
      entry({ merchant: "m1", status: 401, code: "payment_token_not_accepted" }), // req_8
    ]);
    expect(findings).toEqual([
      expected.missingCredentials(NOBODY, "1 request", "1 to /api/v2/payment/*", ["bearer"], ["req_2"]),
      expected.jwtOnPaymentInit(m("m1"), "2 requests", ["req_3", "req_7"]),
      expected.credentialsInQuery(m("m2"), "1 request", ["req_5"]),
      expected.paymentTokenOnBearerEndpoint(m("m1"), "1 request", ["req_8"]),
      expected.deprecatedLoginUsed(m("m2"), "2 requests", ["req_1", "req_4"]),
      expected.conflictingCredentials(m("m1"), "1 request", ["req_6"]),
    ]);
    // The order the entries come in does not matter; the ids sort by number (req_9 before req_10).
    expect(analyze([...findingsInput()].reverse())).toEqual(analyze(findingsInput()));
    expect(analyze(findingsInput()).map((f) => f.evidence[0])).toEqual(["req_9", "req_10"]);
  });

  it("hammering_after_error: only the same request (method, path, endpoint); paths the API does not serve never count", () => {
    const fail = (at: number, more: Partial<JournalEntry> = {}) => entry({ status: 401, code: "credentials_missing", at, ...more });
    // Three different paths of one endpoint, 0.5 s apart: three requests, none repeated.
    expect(
      codes(analyze([fail(0, { path: "/api/v2/payment/a" }), fail(0.5, { path: "/api/v2/payment/b" }), fail(1, { path: "/api/v2/payment/c" })])),
    ).toEqual(["missing_credentials"]);
    seq = 0;
    // One path, three methods.
    expect(codes(analyze([fail(0, { method: "GET" }), fail(0, { method: "POST" }), fail(0, { method: "DELETE" })]))).toEqual(["missing_credentials"]);
    seq = 0;
    // The same request three times, with another request in between: still a run of its own.
    expect(analyze([fail(0), fail(0, { path: "/api/v2/payment/x" }), fail(1), fail(1.5)]).map((f) => [f.code, f.evidence])).toEqual([
      ["hammering_after_error", ["req_1", "req_3", "req_4"]],
      ["missing_credentials", ["req_1", "req_2", "req_3", "req_4"]],
    ]);
    seq = 0;
    // Three mistyped paths, even the same one three times: the base URL is wrong, which is one finding.
    const unknown = (path: string) => entry({ merchant: undefined, method: "POST", path, endpoint: "unknown", status: 404, code: "not_found" });
    expect(codes(analyze([unknown("/api/v1/auth/token"), unknown("/v2/auth/token"), unknown("/api/v2/api/v2/auth/token")]))).toEqual([
      "wrong_base_path",
    ]);
    seq = 0;
    expect(codes(analyze([unknown("/v2/auth/token"), unknown("/v2/auth/token"), unknown("/v2/auth/token")]))).toEqual(["wrong_base_path"]);
  });

  it("wrong_base_path: every wrong path named with the path meant, at most five, the API's paths listed when one matches none", () => {
    const unknown = (path: string, method = "POST") =>
      entry({ merchant: undefined, method, path, endpoint: "unknown", status: 404, code: "not_found" });
    expect(analyze([unknown("/api/v1/auth/token"), unknown("/merchant/api/v2/payment/init"), unknown("/api/v1/auth/token")])).toEqual([
      expected.wrongBasePath(
        NOBODY,
        "2 paths",
        "3 requests",
        ["POST /api/v1/auth/token (2 times): use /api/v2/auth/token", "POST /merchant/api/v2/payment/init: use /api/v2/payment/init"],
        false,
        ["req_1", "req_2", "req_3"],
      ),
    ]);
    seq = 0;
    // Per merchant (a session's base URL attributes them), the method is part of the path named.
    expect(analyze([entry({ method: "GET", path: "/jwks", endpoint: "unknown", status: 404, code: "not_found" })])).toEqual([
      expected.wrongBasePath(m("m1"), "1 path", "1 request", ["GET /jwks: use /.well-known/jwks.json"], false, ["req_1"]),
    ]);
    seq = 0;
    // At the root, with no merchant named, a path with no correction is not the integration's.
    expect(analyze([unknown("/"), unknown("/favicon.ico", "GET")])).toEqual([]);
    seq = 0;
    // Under a session's base URL every path counts, named as the session's client's.
    const underSession = (path: string, method = "POST") =>
      entry({
        merchant: undefined,
        session: "ses_0123456789abcdef",
        viaSessionUrl: true,
        method,
        path,
        endpoint: "unknown",
        status: 404,
        code: "not_found",
      });
    const many = ["/a", "/b", "/c", "/api/v2/api/v2/cashout/x", "/e", "/f", "/g"].map((p) => underSession(p, "GET"));
    const long = underSession(`/${"x".repeat(300)}/auth/token`);
    const [finding] = analyze([...many, long]);
    expect(finding).toEqual(
      expected.wrongBasePath(
        "The client of session 'ses_0123456789abcdef'",
        "8 paths",
        "8 requests",
        [
          "GET /a: no API path matches it",
          "GET /b: no API path matches it",
          "GET /c: no API path matches it",
          "GET /api/v2/api/v2/cashout/x: use /api/v2/cashout/x",
          "GET /e: no API path matches it, and 3 other paths",
        ],
        true,
        ["req_1", "req_2", "req_3", "req_4", "req_5", "req_6", "req_7", "req_8"],
      ),
    );
    seq = 0;
    // A path is cut in the message (the evidence has the request).
    expect(analyze([long])[0]!.message).toContain(`POST /${"x".repeat(119)}...: use /api/v2/auth/token.`);
  });

  it("missing_credentials: the codes of a request with no credentials at all, on every endpoint; a forgotten secret is not one", () => {
    const refusal = (endpoint: string, code: string, status = 401) => entry({ merchant: undefined, endpoint, status, code });
    expect(
      analyze([
        refusal("token", "api_key_missing", 400),
        refusal("token", "api_secret_missing", 400),
        refusal("payment-init", "credentials_missing"),
        refusal("cashout", "credentials_missing"),
        refusal("login", "login_body_missing", 400),
        refusal("payment", "credentials_missing"),
        refusal("payment", "bearer_token_empty", 400),
      ]),
    ).toEqual([
      expected.missingCredentials(
        NOBODY,
        "5 requests",
        "1 to POST /api/v2/auth/token, 1 to POST /api/v2/payment/init, 1 to /api/v2/cashout/*, 1 to POST /api/login_check, 1 to /api/v2/payment/*",
        ["token", "paymentInit", "bearer", "login"],
        ["req_1", "req_3", "req_4", "req_5", "req_6"],
      ),
      expected.deprecatedLoginUsed(NOBODY, "1 request", ["req_5"]),
    ]);
  });

  it("credentials_of_other_session: each request refused session_credentials_mismatch, an error", () => {
    // As the pipeline journals them: in the base URL's session, naming no merchant (the credentials'
    // merchant is not this session's, so it is not recorded).
    const mismatch = () =>
      entry({
        merchant: undefined,
        session: "ses_0123456789abcdef",
        viaSessionUrl: true,
        status: 401,
        code: "session_credentials_mismatch",
        endpoint: "token",
        method: "POST",
      });
    // Between them, a good call of the session's own merchant.
    expect(analyze([mismatch(), entry({ session: "ses_0123456789abcdef", viaSessionUrl: true }), mismatch()])).toEqual([
      expected.credentialsOfOtherSession("The client of session 'ses_0123456789abcdef'", "2 requests", ["req_1", "req_3"]),
    ]);
  });

  it("a correct client's journal has no findings: every endpoint, good answers, a refused call retried once with a new token", () => {
    const journal = [
      exchanged("a", { at: 0 }),
      called("a", { at: 1 }),
      called("a", { at: 2, method: "POST", path: "/api/v2/payment/refund" }),
      entry({ at: 3, method: "POST", path: "/api/v2/payment/init", endpoint: "payment-init", status: 201 }),
      called("a", { at: 4, endpoint: "cashout", path: "/api/v2/cashout/transfer", method: "POST" }),
      entry({ at: 5, method: "GET", path: "/.well-known/jwks.json", endpoint: "jwks" }),
      refused("a", "token_revoked", { at: 6 }),
      exchanged("b", { at: 7 }),
      called("b", { at: 8 }),
    ];
    expect(analyze(journal)).toEqual([]);
  });

  it("the Findings table of docs/findings.md lists every finding the report can give, with its severity", () => {
    const every = analyze([
      ...["a", "b"].map((jti) => exchanged(jti)),
      refused("a", "token_expired"),
      ...["c", "d", "e", "f"].map((jti) => exchanged(jti)),
      refused("a", "token_revoked"),
      entry({ endpoint: "payment-init", status: 401, code: "access_token_on_payment_init" }),
      entry({ status: 401, code: "payment_token_not_accepted" }),
      entry({ endpoint: "login", method: "POST", path: "/api/login_check" }),
      entry({ status: 400, code: "token_in_query" }),
      entry({ endpoint: "token", status: 400, code: "credential_conflict" }),
      entry({ endpoint: "cashout", status: 429, retryAfter: 10, code: "rate_limited", at: 10 }),
      entry({ endpoint: "cashout", status: 200, at: 11 }),
      ...[20, 20, 20].map((at) => entry({ status: 401, code: "credentials_missing", at })),
      entry({ status: 401, code: "session_credentials_mismatch" }),
      entry({ endpoint: "unknown", path: "/api/v1/auth/token", status: 404, code: "not_found" }),
      entry({ endpoint: "token", status: 401, code: "wrong_api_secret", unverified: true }),
    ]);
    const page = readFileSync(new URL("../../docs/findings.md", import.meta.url), "utf8");
    const table = page.slice(page.indexOf("| code | severity |"), page.indexOf("Only errors fail"));
    const rows = [...table.matchAll(/^\| `([a-z_]+)` \| (error|warning|info) \|/gm)].map(([, code, severity]) => `${code} ${severity}`);
    expect(rows.sort()).toEqual(every.map((f) => `${f.code} ${f.severity}`).sort());
    expect(rows).toHaveLength(14);
  });

  it("each credential conflict counts: a code, or a credential found both ways", () => {
    const t = (more: Partial<JournalEntry>) => entry({ endpoint: "token", method: "POST", ...more });
    expect(
      analyze([
        t({ status: 400, code: "credential_conflict" }),
        t({ credentialSources: { apiKey: "header", apiSecret: "both" } }),
        t({ credentialSources: { apiKey: "header", apiSecret: "body" } }),
      ])[0]!.evidence,
    ).toEqual(["req_1", "req_2"]);
  });
});

/** Two errors whose first requests are req_9 and req_10, in that order. */
function findingsInput(): JournalEntry[] {
  return [
    entry({ seq: 10, merchant: "a", endpoint: "payment-init", status: 401, code: "access_token_on_payment_init" }),
    entry({ seq: 9, merchant: "b", endpoint: "payment-init", status: 401, code: "access_token_on_payment_init" }),
  ];
}
