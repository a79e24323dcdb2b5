import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeJwt } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { redact } from "../../src/core/redact.js";
import { SESSION_HISTORY_MAX } from "../../src/control/session-history.js";
import { libraryNames } from "../../src/scenarios/library.js";
import {
  DEFAULT_KEY,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  T0,
  postEmpty,
  postJson,
  problem,
  type Reply,
  type TestServer,
  serversPerTest,
} from "../support/server.js";
import { expectProblem, RENEW_HINT } from "../support/expect.js";

/**
 * Black-box tests of the sessions of the control plane (docs/control-plane.md): a fresh,
 * isolated merchant + scenario + clock per test, over real HTTP against the real node:http server.
 * The sandbox clock is frozen at T0; wall-clock time (idle reaping) is moved with vitest's fake
 * Date, never slept on.
 */

interface SessionMerchant {
  id: string;
  api_key: string;
  api_secret: string;
  payment_token: string;
  login: { email: string; password: string };
}

interface SessionInfo {
  id: string;
  scenario: string;
  profile: string;
  merchant: SessionMerchant;
  merchants: SessionMerchant[];
  base_url: string;
  expires_at: string;
}

const ISO_T0 = new Date(T0).toISOString();
/** A wall-clock instant for the tests that fake Date (far from the frozen sandbox clock on purpose). */
const WALL = Date.UTC(2030, 4, 6, 12, 0, 0);

/** A real server on port 0 for the current test, closed after it. */
const server = serversPerTest();

/** A loaded scenario whose name no library scenario is near. */
const LOADED_FOR_SUGGESTION = {
  name: "checkout-flow",
  description: "a loaded scenario",
  merchants: [{ id: "m_checkout_flow", api_key: "checkout-flow-key", api_secret: "checkout-flow-secret", payment_token: "checkout-flow-pt" }],
};

afterEach(() => {
  vi.useRealTimers();
});

// ---------------------------------------------------------------------------------------------
// helpers

async function createSession(t: TestServer, body: unknown = {}): Promise<SessionInfo> {
  const r = await t.call("/__sandbox/sessions", postJson(body));
  expect(r.status, r.text).toBe(201);
  return r.json as SessionInfo;
}

function exchange(t: TestServer, m: { api_key: string; api_secret: string }): Promise<Reply> {
  return t.call("/api/v2/auth/token", postJson({ api_key: m.api_key, api_secret: m.api_secret }));
}

async function tokenOf(t: TestServer, m: { api_key: string; api_secret: string }): Promise<string> {
  const r = await exchange(t, m);
  expect(r.status, r.text).toBe(200);
  return r.json.access_token as string;
}

function pay(t: TestServer, token: string, path = "/api/v2/payment/orders"): Promise<Reply> {
  return t.call(path, { headers: { authorization: `Bearer ${token}` } });
}

function paymentInit(t: TestServer, paymentToken: string): Promise<Reply> {
  return t.call("/api/v2/payment/init", {
    method: "POST",
    headers: { authorization: `Bearer ${paymentToken}`, "content-type": "application/json" },
    body: JSON.stringify({ amount: 1999, currency: "EUR" }),
  });
}

function login(t: TestServer, email: string, password: string): Promise<Reply> {
  return t.call("/api/login_check", postJson({ username: email, password }));
}

function unknownApiKey(apiKey: string, loaded = `loaded: '${DEFAULT_KEY}'`) {
  return problem(
    401,
    "Unauthorized",
    "unknown_api_key",
    `The api_key ${redact(apiKey)} is not known to this sandbox. Use the api_key of a loaded merchant (${loaded}), and check that api_key and api_secret are not swapped.`,
    "/api/v2/auth/token",
    "invalid_client",
  );
}

function noSession(id: string, sub = "") {
  return problem(
    404,
    "Not Found",
    "not_found",
    `There is no session '${id}': it was deleted, reaped after being idle, or never created. Create one with POST /__sandbox/sessions.`,
    `/__sandbox/sessions/${id}${sub}`,
    "not_found",
  );
}

/** The refusal of a creation past `maxSessions: 5`. */
const TOO_MANY_OF_5 = problem(
  429,
  "Too Many Requests",
  "too_many_sessions",
  "This sandbox already holds 5 sessions. DELETE /__sandbox/sessions/{id} when a test is done, or wait for idle sessions to be reaped.",
  "/__sandbox/sessions",
  "rate_limited",
);

function tokenExpired(expAt: number, now: number) {
  return problem(
    401,
    "Unauthorized",
    "token_expired",
    `The access token expired at ${new Date(expAt).toISOString()} (sandbox time is now ${new Date(now).toISOString()}). Renew it before it expires: ${RENEW_HINT}`,
    "/api/v2/payment/orders",
    "invalid_token",
  );
}

const TOKEN_REVOKED = problem(
  401,
  "Unauthorized",
  "token_revoked",
  `The access token was revoked. ${RENEW_HINT}`,
  "/api/v2/payment/orders",
  "invalid_token",
);
const TOKEN_UNKNOWN_MERCHANT = problem(
  401,
  "Unauthorized",
  "token_unknown_merchant",
  `The token's subject is not a merchant of this sandbox. ${RENEW_HINT}`,
  "/api/v2/payment/orders",
  "invalid_token",
);
const PAYMENT_TOKEN_UNKNOWN = problem(
  401,
  "Unauthorized",
  "payment_token_unknown",
  "The merchant payment token is not known to this sandbox (expired, revoked, or mistyped). Use the payment token configured for your merchant (the built-in merchant's is in the README).",
  "/api/v2/payment/init",
  "invalid_token",
);

/** The merchant a session of the default scenario gets, derived from its id. */
function defaultSessionMerchant(id: string): SessionMerchant {
  const tag = `${id.slice(4)}_0`;
  return {
    id: `${DEFAULT_MERCHANT_ID}.${id}`,
    api_key: `sk_${tag}`,
    api_secret: expect.stringMatching(/^ss_[0-9a-f]{24}$/) as unknown as string,
    payment_token: expect.stringMatching(/^mpt_test_[0-9a-f]{24}$/) as unknown as string,
    login: { email: `${tag}@sessions.sandbox.test`, password: expect.stringMatching(/^pw_[0-9a-f]{24}$/) as unknown as string },
  };
}

const SESSION_ID = /^ses_[0-9a-f]{16}$/;

// ---------------------------------------------------------------------------------------------

describe("POST /__sandbox/sessions", () => {
  it("answers 201 with a Location header and the session's fresh credentials", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server();
    const r = await t.call("/__sandbox/sessions", postJson({}));

    expect(r.status).toBe(201);
    const id = r.json.id as string;
    expect(id).toMatch(SESSION_ID);
    expect(r.headers.get("location")).toBe(`/__sandbox/sessions/${id}`);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const merchant = defaultSessionMerchant(id);
    expect(r.json).toEqual({
      id,
      scenario: "default",
      profile: "oauth",
      merchant,
      merchants: [merchant],
      // Built from the Host the request came with (fetch sends 127.0.0.1:<port>).
      base_url: `${t.url}/s/${id}`,
      // Idle sessions are reaped after 30 minutes of wall-clock time by default.
      expires_at: new Date(WALL + 30 * 60_000).toISOString(),
    });
    expect(r.json.merchants[0]).toEqual(r.json.merchant);
    // Fresh credentials, never the published default ones.
    const m = r.json.merchant as SessionMerchant;
    const published = [DEFAULT_KEY, DEFAULT_SECRET, DEFAULT_PAYMENT_TOKEN, "merchant@sandbox.test", "sandbox-password"];
    for (const value of [m.api_key, m.api_secret, m.payment_token, m.login.email, m.login.password]) expect(published).not.toContain(value);
  });

  it("takes an empty body (declared JSON, as every control-plane POST) as {}", async () => {
    const t = await server();
    const r = await t.call("/__sandbox/sessions", postEmpty());
    expect(r.status).toBe(201);
    expect(r.json.scenario).toBe("default");
    expect(r.json.id).toMatch(SESSION_ID);
  });

  it("gives every session credentials of its own", async () => {
    const t = await server();
    const a = await createSession(t);
    const b = await createSession(t);
    expect(a.id).not.toBe(b.id);
    for (const field of ["id", "api_key", "api_secret", "payment_token"] as const) {
      expect(a.merchant[field]).not.toBe(b.merchant[field]);
    }
    expect(a.merchant.login.email).not.toBe(b.merchant.login.email);
    expect(a.merchant.login.password).not.toBe(b.merchant.login.password);
    // One session's secret does not open the other session's key.
    const crossed = await exchange(t, { api_key: b.merchant.api_key, api_secret: a.merchant.api_secret });
    expectProblem(
      crossed,
      problem(
        401,
        "Unauthorized",
        "wrong_api_secret",
        `The api_secret does not match the api_key '${b.merchant.api_key}'. Check that the secret belongs to this key and was not rotated.`,
        "/api/v2/auth/token",
        "invalid_client",
      ),
    );
    expect(crossed.headers.get("www-authenticate")).toBe('ApiKey realm="merchant-api", error="invalid_client"');
    // Nor does its login password.
    expect((await login(t, b.merchant.login.email, a.merchant.login.password)).json).toEqual({ code: 401, message: "Invalid credentials." });
  });

  it("hands out credentials that work end to end: token exchange, payment call, payment/init, login", async () => {
    const t = await server();
    const s = await createSession(t);
    const m = s.merchant;

    const issued = await exchange(t, m);
    expect(issued.status).toBe(200);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    expect(issued.headers.get("pragma")).toBe("no-cache");
    expect(issued.json).toEqual({ access_token: expect.any(String), token_type: "Bearer", expires_in: 3600 });
    const claims = decodeJwt(issued.json.access_token);
    expect(claims).toMatchObject({ sub: m.id, client_id: m.api_key, iat: T0 / 1000, exp: T0 / 1000 + 3600, scope: "payment cashout" });

    const viaHeaders = await t.call("/api/v2/auth/token", { method: "POST", headers: { "x-api-key": m.api_key, "x-api-secret": m.api_secret } });
    expect(viaHeaders.status).toBe(200);

    const paid = await pay(t, issued.json.access_token);
    expect(paid.status).toBe(200);
    expect(paid.json).toEqual({
      sandbox: true,
      merchant_id: m.id,
      operation: "GET /api/v2/payment/orders",
      scope: "payment",
      token_id: claims.jti,
      expires_at: "2026-01-01T01:00:00.000Z",
      note: "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.",
    });
    const cashout = await t.call("/api/v2/cashout/payouts", { method: "POST", headers: { authorization: `Bearer ${issued.json.access_token}` } });
    expect(cashout.status).toBe(200);
    expect(cashout.json.merchant_id).toBe(m.id);

    const init = await paymentInit(t, m.payment_token);
    expect(init.status).toBe(201);
    expect(init.json).toMatchObject({ merchant_id: m.id, status: "created", amount: 1999, currency: "EUR", created_at: ISO_T0 });
    expect(init.json.payment_id).toMatch(/^pay_[a-z0-9]{24}$/);
    expect(init.headers.get("location")).toBe(`/api/v2/payment/${init.json.payment_id}`);

    const loggedIn = await login(t, m.login.email, m.login.password);
    expect(loggedIn.status).toBe(200);
    expect(Object.keys(loggedIn.json)).toEqual(["token"]);
    expect(decodeJwt(loggedIn.json.token)).toMatchObject({ sub: m.id, username: m.login.email });
    expect(loggedIn.headers.get("deprecation")).toMatch(/^@\d+$/);

    // The published default merchant keeps working beside the session.
    expect((await pay(t, await t.token())).json.merchant_id).toBe(DEFAULT_MERCHANT_ID);
  });

  it("creates a session of a library scenario that was not loaded at start: 503 twice for its merchant, then 200", async () => {
    const t = await server();
    const health = await t.call("/__sandbox/health");
    expect(health.json.scenarios).toEqual(["default"]);

    const r = await t.call("/__sandbox/sessions", postJson({ scenario: "token-endpoint-outage" }));
    expect(r.status).toBe(201);
    const id = r.json.id as string;
    const tag = `${id.slice(4)}_0`;
    const merchant = {
      id: `m_token_endpoint_outage.${id}`,
      api_key: `sk_${tag}`,
      api_secret: expect.stringMatching(/^ss_[0-9a-f]{24}$/),
      payment_token: expect.stringMatching(/^mpt_test_[0-9a-f]{24}$/),
      login: { email: `${tag}@sessions.sandbox.test`, password: expect.stringMatching(/^pw_[0-9a-f]{24}$/) },
    };
    expect(r.json).toEqual({
      id,
      scenario: "token-endpoint-outage",
      profile: "oauth",
      merchant,
      merchants: [merchant],
      base_url: `${t.url}/s/${id}`,
      expires_at: expect.any(String),
    });

    const outage = problem(
      503,
      "Service Unavailable",
      "service_unavailable",
      "Service Unavailable: simulated by scenario 'token-endpoint-outage', rule 'outage'. Retry after 30 seconds, as the Retry-After header says.",
      "/api/v2/auth/token",
      "temporarily_unavailable",
    );
    for (let i = 0; i < 2; i++) {
      const down = await exchange(t, r.json.merchant);
      expectProblem(down, outage);
      expect(down.headers.get("retry-after")).toBe("30");
      expect(down.headers.get("x-sandbox-rule")).toBe("token-endpoint-outage/outage");
    }
    const up = await exchange(t, r.json.merchant);
    expect(up.status).toBe(200);
    expect(up.headers.get("x-sandbox-rule")).toBeNull();
    expect((await pay(t, up.json.access_token)).status).toBe(200);

    // The scripted outage belongs to that session's merchant only.
    expect((await exchange(t, { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET })).status).toBe(200);
    const other = await createSession(t, { scenario: "token-endpoint-outage" });
    expect((await exchange(t, other.merchant)).status).toBe(503);
  });

  it("creates a session of a scenario loaded at start, with its own rule counts", async () => {
    const t = await server({ scenarios: ["token-endpoint-outage"] });
    const loaded = { api_key: "token-endpoint-outage-key", api_secret: "token-endpoint-outage-secret" };
    expect((await exchange(t, loaded)).status).toBe(503);
    expect((await exchange(t, loaded)).status).toBe(503);
    expect((await exchange(t, loaded)).status).toBe(200);
    // A session starts from the scenario's start, not from where the loaded copy stands.
    const s = await createSession(t, { scenario: "token-endpoint-outage" });
    expect(s.scenario).toBe("token-endpoint-outage");
    expect((await exchange(t, s.merchant)).status).toBe(503);
    expect((await exchange(t, s.merchant)).status).toBe(503);
    expect((await exchange(t, s.merchant)).status).toBe(200);
    expect((await exchange(t, loaded)).status).toBe(200);
  });

  it("refuses an unknown scenario: 400 session_scenario_unknown, naming the library", async () => {
    const t = await server();
    const r = await t.call("/__sandbox/sessions", postJson({ scenario: "token-endpoint-outgae" }));
    expectProblem(
      r,
      problem(
        400,
        "Bad Request",
        "session_scenario_unknown",
        `no scenario named 'token-endpoint-outgae' in the library (did you mean 'token-endpoint-outage'?); use a file path, or one of: ${libraryNames().join(", ")}.`,
        "/__sandbox/sessions",
        "invalid_request",
      ),
    );
    expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
  });

  it("a name too far for a typo still gets a did-you-mean from its words: token-expiry", async () => {
    const t = await server();
    const r = await t.call("/__sandbox/sessions", postJson({ scenario: "token-expiry" }));
    expectProblem(
      r,
      problem(
        400,
        "Bad Request",
        "session_scenario_unknown",
        `no scenario named 'token-expiry' in the library (did you mean 'payment-token-expired' or 'token-expires-after-calls'?); use a file path, or one of: ${libraryNames().join(", ")}.`,
        "/__sandbox/sessions",
        "invalid_request",
      ),
    );
  });

  it("the did-you-mean names a loaded scenario too, which a session may use", async () => {
    const t = await server({ scenarios: [{ ...LOADED_FOR_SUGGESTION }] });
    const r = await t.call("/__sandbox/sessions", postJson({ scenario: "checkout-flwo" }));
    expect([r.status, r.json.code]).toEqual([400, "session_scenario_unknown"]);
    expect(r.json.detail).toMatch(
      /^no scenario named 'checkout-flwo' in the library \(did you mean 'checkout-flow'\?\); use a file path, or one of: /,
    );
    expect((await t.call("/__sandbox/sessions", postJson({ scenario: "checkout-flow" }))).status).toBe(201);
  });

  it("does not read files of the server's disk: a path is not a scenario name", async () => {
    // POST /__sandbox/sessions takes "a loaded scenario, or a library scenario by name"
    // (src/control/sessions.ts). The control plane is reachable over the network (the image binds
    // 0.0.0.0, the admin token is optional): it must not open arbitrary paths of the host.
    const dir = mkdtempSync(join(tmpdir(), "sessions-test-"));
    try {
      const file = join(dir, "planted.yaml");
      writeFileSync(
        file,
        "name: planted\ndescription: a file the server was never asked to load\nmerchants:\n  - { id: m_planted, api_key: planted-key, api_secret: planted-secret, payment_token: planted-pt }\n",
      );
      const t = await server();
      for (const scenario of [file, "/etc/hostname", "../../package.json"]) {
        const r = await t.call("/__sandbox/sessions", postJson({ scenario }));
        expect(r.status, `${scenario}: ${r.text}`).toBe(400);
        expect(r.json.code).toBe("session_scenario_unknown");
      }
      expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("refuses a bad body with the exact problem", () => {
    const EXAMPLE = '{"scenario": "token-endpoint-outage"}';
    const cases: Array<[string, RequestInit, ReturnType<typeof problem>]> = [
      [
        "not JSON",
        { method: "POST", headers: { "content-type": "application/json" }, body: "{scenario:" },
        problem(
          400,
          "Bad Request",
          "body_malformed_json",
          `The request body is not valid JSON (syntax error at position 1). Send a JSON object such as ${EXAMPLE}.`,
          "/__sandbox/sessions",
          "invalid_request",
        ),
      ],
      [
        "an array",
        postJson(["default"]),
        problem(
          400,
          "Bad Request",
          "body_not_object",
          "The request body is an array; POST /__sandbox/sessions takes a JSON object.",
          "/__sandbox/sessions",
          "invalid_request",
        ),
      ],
      [
        "a field it does not take",
        postJson({ scenarios: "default" }),
        problem(
          400,
          "Bad Request",
          "unknown_field",
          "POST /__sandbox/sessions does not take 'scenarios'; it takes 'scenario', 'profile'.",
          "/__sandbox/sessions",
          "invalid_request",
        ),
      ],
      [
        "a non-string scenario",
        postJson({ scenario: 42 }),
        problem(
          400,
          "Bad Request",
          "session_scenario_invalid",
          '"scenario" must be the name of a scenario, such as "default" or "token-endpoint-outage".',
          "/__sandbox/sessions",
          "invalid_request",
        ),
      ],
      // A body not declared as JSON: test/control/browser-access.test.ts (every control-plane POST).
    ];
    it.each(cases)("%s", async (_name, init, expected) => {
      const t = await server();
      expectProblem(await t.call("/__sandbox/sessions", init), expected);
      expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
    });

    it("another method: 405 with Allow", async () => {
      const t = await server();
      const r = await t.call("/__sandbox/sessions", { method: "PUT" });
      expectProblem(
        r,
        problem(
          405,
          "Method Not Allowed",
          "method_not_allowed",
          "PUT is not allowed on /__sandbox/sessions. Use GET, HEAD or POST.",
          "/__sandbox/sessions",
          "method_not_allowed",
        ),
      );
      expect(r.headers.get("allow")).toBe("GET, HEAD, POST");
    });
  });
});

describe("GET /__sandbox/sessions and /__sandbox/sessions/{id}", () => {
  it("shows one session with its state and clock, and lists them all in creation order", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server();
    const a = await createSession(t);
    vi.setSystemTime(WALL + 1000);
    const b = await createSession(t, { scenario: "token-endpoint-outage" });

    const one = await t.call(`/__sandbox/sessions/${a.id}`);
    expect(one.status).toBe(200);
    expect(one.headers.get("content-type")).toBe("application/json");
    expect(one.headers.get("cache-control")).toBe("no-store");
    expect(one.json).toEqual({
      ...a,
      state: "started",
      // The session's clock follows the sandbox clock (frozen at T0 here).
      clock: { now: ISO_T0, frozen: true },
      history: [],
      history_dropped: 0,
    });

    const list = await t.call("/__sandbox/sessions");
    expect(list.status).toBe(200);
    expect(list.json).toEqual({
      sessions: [
        { id: a.id, scenario: "default", profile: "oauth", base_url: a.base_url, expires_at: new Date(WALL + 30 * 60_000).toISOString() },
        {
          id: b.id,
          scenario: "token-endpoint-outage",
          profile: "oauth",
          base_url: b.base_url,
          expires_at: new Date(WALL + 1000 + 30 * 60_000).toISOString(),
        },
      ],
    });
  });

  it("the active profile is visible: a session made with a profile says which in POST, GET and the list; one without says the sandbox's", async () => {
    const t = await server();
    const lexik = await createSession(t, { profile: "lexik" });
    const plain = await createSession(t);
    expect([lexik.profile, plain.profile]).toEqual(["lexik", "oauth"]);
    expect((await t.call(`/__sandbox/sessions/${lexik.id}`)).json.profile).toBe("lexik");
    const listed = (await t.call("/__sandbox/sessions")).json.sessions as Array<{ id: string; profile: string }>;
    expect(listed.map((s) => [s.id, s.profile])).toEqual([
      [lexik.id, "lexik"],
      [plain.id, "oauth"],
    ]);
  });

  it("answers 404 for a session that never existed, with the exact message", async () => {
    const t = await server();
    for (const sub of ["", "/clock", "/reset", "/report"]) {
      const init = sub === "/reset" ? postEmpty() : {};
      expectProblem(await t.call(`/__sandbox/sessions/ses_0000000000000000${sub}`, init), noSession("ses_0000000000000000", sub));
    }
  });

  it("keeps the health check about the loaded scenarios while sessions exist", async () => {
    // Sessions are private copies, not loaded scenarios: health must not grow by one entry
    // per session (or repeat "default" once per default session).
    const t = await server();
    await createSession(t);
    await createSession(t);
    await createSession(t, { scenario: "token-endpoint-outage" });
    const health = await t.call("/__sandbox/health");
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: "ok", version: expect.stringMatching(/^\d+\.\d+\.\d+$/), scenarios: ["default"] });
  });
});

describe("DELETE /__sandbox/sessions/{id}", () => {
  it("answers 204; then the session's credentials and tokens are refused and it is gone", async () => {
    const t = await server();
    const s = await createSession(t);
    const m = s.merchant;
    const token = await tokenOf(t, m);
    expect((await pay(t, token)).status).toBe(200);

    const del = await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect(del.headers.get("cache-control")).toBe("no-store");

    const refused = await exchange(t, m);
    expectProblem(refused, unknownApiKey(m.api_key));
    expect(refused.headers.get("www-authenticate")).toBe('ApiKey realm="merchant-api", error="invalid_client"');
    expectProblem(await pay(t, token), TOKEN_UNKNOWN_MERCHANT);
    expectProblem(await paymentInit(t, m.payment_token), PAYMENT_TOKEN_UNKNOWN);
    const loginRefused = await login(t, m.login.email, m.login.password);
    expect(loginRefused.status).toBe(401);
    expect(loginRefused.json).toEqual({ code: 401, message: "Invalid credentials." });

    expectProblem(await t.call(`/__sandbox/sessions/${s.id}`), noSession(s.id));
    expectProblem(await t.call(`/__sandbox/sessions/${s.id}`, { method: "DELETE" }), noSession(s.id));
    expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
    // The default merchant is untouched.
    expect((await pay(t, await t.token())).status).toBe(200);
  });

  it("ends only that session", async () => {
    const t = await server();
    const a = await createSession(t);
    const b = await createSession(t);
    const tokenB = await tokenOf(t, b.merchant);
    expect((await t.call(`/__sandbox/sessions/${a.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await pay(t, tokenB)).status).toBe(200);
    expect((await exchange(t, b.merchant)).status).toBe(200);
    expect((await t.call("/__sandbox/sessions")).json.sessions.map((s: { id: string }) => s.id)).toEqual([b.id]);
  });

  it("does not show one session's api_key to another session's client", async () => {
    // A mistyped api_key gets a message naming the loaded merchants' (published) api_keys. Other
    // tests' sessions are not loaded merchants: naming their keys leaks one session to the next.
    const t = await server();
    const other = await createSession(t);
    const r = await exchange(t, { api_key: "sk_mistyped", api_secret: "x" });
    expectProblem(r, unknownApiKey("sk_mistyped"));
    expect(r.text).not.toContain(other.merchant.api_key);
  });
});

describe("session clocks", () => {
  it("two parallel sessions advance their clocks independently", async () => {
    const t = await server();
    const [a, b] = await Promise.all([createSession(t), createSession(t)]);
    const [tokenA, tokenB, tokenDefault] = await Promise.all([tokenOf(t, a.merchant), tokenOf(t, b.merchant), t.token()]);

    const moved = await t.call(`/__sandbox/sessions/${a.id}/clock`, postJson({ advance: "61m" }));
    expect(moved.status).toBe(200);
    expect(moved.headers.get("content-type")).toBe("application/json");
    expect(moved.json).toEqual({ now: "2026-01-01T01:01:00.000Z", frozen: true });

    const [paidA, paidB, paidDefault] = await Promise.all([pay(t, tokenA), pay(t, tokenB), pay(t, tokenDefault)]);
    expectProblem(paidA, tokenExpired(T0 + 3600_000, T0 + 61 * 60_000));
    expect(paidB.status).toBe(200);
    expect(paidB.json.merchant_id).toBe(b.merchant.id);
    expect(paidDefault.status).toBe(200);

    expect((await t.call(`/__sandbox/sessions/${a.id}/clock`)).json.now).toBe("2026-01-01T01:01:00.000Z");
    expect((await t.call(`/__sandbox/sessions/${b.id}/clock`)).json.now).toBe(ISO_T0);
    expect((await t.call(`/__sandbox/sessions/${b.id}`)).json.clock.now).toBe(ISO_T0);
    expect((await t.call("/__sandbox/clock")).json).toEqual({ now: ISO_T0, frozen: true });

    // Issuing follows the session's clock too: A's new token is dated T0 + 61m, and works.
    const fresh = await exchange(t, a.merchant);
    expect(decodeJwt(fresh.json.access_token)).toMatchObject({ iat: T0 / 1000 + 61 * 60, exp: T0 / 1000 + 61 * 60 + 3600 });
    expect((await pay(t, fresh.json.access_token)).status).toBe(200);
    // B's session is still at T0: its token issued now is dated T0.
    expect(decodeJwt(await tokenOf(t, b.merchant)).iat).toBe(T0 / 1000);
  });

  it("takes set and freeze, and refuses bad values with the clock endpoint's codes", async () => {
    const t = await server();
    const s = await createSession(t);
    const where = `/__sandbox/sessions/${s.id}/clock`;
    const set = await t.call(where, postJson({ set: "2026-03-01T00:00:00Z", freeze: true }));
    expect(set.json).toEqual({ now: "2026-03-01T00:00:00.000Z", frozen: true });
    expect((await t.call(where, postJson({ advance: "-30m" }))).json).toEqual({ now: "2026-02-28T23:30:00.000Z", frozen: true });
    expect((await t.call("/__sandbox/clock")).json).toEqual({ now: ISO_T0, frozen: true });

    const bad = (code: string, detail: string) => problem(400, "Bad Request", code, detail, where, "invalid_request");
    expectProblem(
      await t.call(where, postJson({})),
      bad("clock_change_missing", `POST ${where} needs {"advance": "59m"}, {"set": "2026-01-01T00:00:00Z"} or {"freeze": true}.`),
    );
    expectProblem(
      await t.call(where, postJson({ advance: "soon" })),
      bad("clock_advance_invalid", '"advance" must be a duration such as "90s", "59m", "1h" or "-5m" (or a number of seconds).'),
    );
    expectProblem(
      await t.call(where, postJson({ rewind: "1h" })),
      bad("unknown_field", `POST ${where} does not take 'rewind'; it takes 'advance', 'set', 'freeze'.`),
    );
    expect((await t.call(where)).json).toEqual({ now: "2026-02-28T23:30:00.000Z", frozen: true });
  });

  it("sessions follow the sandbox clock: moving it moves every session", async () => {
    const t = await server();
    const s = await createSession(t);
    const token = await tokenOf(t, s.merchant);
    expect((await t.call("/__sandbox/clock", postJson({ advance: "61m" }))).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${s.id}/clock`)).json.now).toBe("2026-01-01T01:01:00.000Z");
    expectProblem(await pay(t, token), tokenExpired(T0 + 3600_000, T0 + 61 * 60_000));
  });
});

describe("a session's history (GET /__sandbox/sessions/{id}: history)", () => {
  const at = (ms: number) => new Date(ms).toISOString();

  it("lists a clock move, actions and a reset, each with its wall and session-clock time and what it did, never a secret", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server();
    const s = await createSession(t);
    expect((await exchange(t, s.merchant)).status).toBe(200);
    const moved = await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: "61m", freeze: true }));
    expect(moved.status, moved.text).toBe(200);
    vi.setSystemTime(WALL + 1000);
    const newSecret = "ss_history_rotated_secret_0001";
    const ran = await t.call(
      `/__sandbox/sessions/${s.id}/actions`,
      postJson({
        now: { expire_token: "all", rotate_secret: newSecret },
        next: { endpoint: "token", times: 2, then: { respond: { status: 503, retry_after: "30s" } } },
      }),
    );
    expect(ran.status, ran.text).toBe(200);
    vi.setSystemTime(WALL + 2000);
    expect((await t.call(`/__sandbox/sessions/${s.id}/reset`, postEmpty())).status).toBe(200);

    const shown = await t.call(`/__sandbox/sessions/${s.id}`);
    expect(shown.status).toBe(200);
    expect(shown.text).not.toContain(newSecret);
    expect(shown.json.history_dropped).toBe(0);
    expect(shown.json.history).toEqual([
      {
        id: "req_1.1",
        session: s.id,
        time: at(WALL),
        sandboxTime: ISO_T0,
        kind: "clock",
        change: { advance: "61m", freeze: true },
        clock: { now: at(T0 + 61 * 60_000), frozen: true },
      },
      {
        id: "req_1.2",
        session: s.id,
        time: at(WALL + 1000),
        sandboxTime: at(T0 + 61 * 60_000),
        kind: "actions",
        merchants: [s.merchant.id],
        now: { expire_token: "all", rotate_secret: redact(newSecret) },
        next: { rule: "default/action-1", endpoint: "token", times: 2, actions: ["respond"] },
        clock: { now: at(T0 + 61 * 60_000), frozen: true },
      },
      {
        id: "req_1.3",
        session: s.id,
        time: at(WALL + 2000),
        sandboxTime: at(T0 + 61 * 60_000),
        kind: "reset",
        clock: { now: ISO_T0, frozen: true },
      },
    ]);
  });

  it("refused request changes nothing: a refused clock move or action adds no entry", async () => {
    const t = await server();
    const s = await createSession(t);
    expect((await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: "soon" }))).status).toBe(400);
    expect((await t.call(`/__sandbox/sessions/${s.id}/actions`, postJson({ now: { expire_token: "some" } }))).status).toBe(400);
    const shown = (await t.call(`/__sandbox/sessions/${s.id}`)).json;
    expect([shown.history, shown.history_dropped]).toEqual([[], 0]);
  });

  it(`bounded memory: a session keeps its last ${SESSION_HISTORY_MAX} entries; the oldest are dropped and counted`, async () => {
    const t = await server();
    const s = await createSession(t);
    const moves = SESSION_HISTORY_MAX + 5;
    for (let i = 0; i < moves; i++) {
      expect((await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: "1s" }))).status).toBe(200);
    }
    const shown = (await t.call(`/__sandbox/sessions/${s.id}`)).json;
    expect(shown.history).toHaveLength(SESSION_HISTORY_MAX);
    expect(shown.history_dropped).toBe(5);
    expect(shown.history[0].id).toBe("req_0.6");
    expect(shown.history.at(-1)).toMatchObject({ id: `req_0.${moves}`, change: { advance: "1s" }, clock: { now: at(T0 + moves * 1000) } });
  });
});

describe("POST /__sandbox/sessions/{id}/reset", () => {
  it("puts the scenario back to its start (the outage happens again) and revokes the tokens issued before", async () => {
    const t = await server();
    const s = await createSession(t, { scenario: "token-endpoint-outage" });
    const other = await createSession(t, { scenario: "token-endpoint-outage" });
    expect((await exchange(t, s.merchant)).status).toBe(503);
    expect((await exchange(t, s.merchant)).status).toBe(503);
    const before = await tokenOf(t, s.merchant);
    expect((await pay(t, before)).status).toBe(200);
    // The other session is mid-scenario too, and holds a token.
    expect((await exchange(t, other.merchant)).status).toBe(503);
    expect((await exchange(t, other.merchant)).status).toBe(503);
    const otherToken = await tokenOf(t, other.merchant);
    // The session's clock was moved; the reset brings it back to the sandbox clock.
    await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: "10m" }));

    const reset = await t.call(`/__sandbox/sessions/${s.id}/reset`, postEmpty());
    expect(reset.status).toBe(200);
    expect(reset.headers.get("content-type")).toBe("application/json");
    expect(reset.json).toEqual({ reset: true, session: s.id, clock: { now: ISO_T0, frozen: true } });

    expectProblem(await pay(t, before), TOKEN_REVOKED);
    expect((await exchange(t, s.merchant)).status).toBe(503);
    expect((await exchange(t, s.merchant)).status).toBe(503);
    const after = await tokenOf(t, s.merchant);
    expect((await pay(t, after)).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${s.id}`)).json.state).toBe("started");

    // Nothing leaked into the other session: its token works and its outage is over.
    expect((await pay(t, otherToken)).status).toBe(200);
    expect((await exchange(t, other.merchant)).status).toBe(200);
    // The credentials stay the session's.
    expect((await t.call(`/__sandbox/sessions/${s.id}`)).json.merchant).toEqual(s.merchant);
  });

  it("takes only POST", async () => {
    const t = await server();
    const s = await createSession(t);
    const r = await t.call(`/__sandbox/sessions/${s.id}/reset`);
    expectProblem(
      r,
      problem(
        405,
        "Method Not Allowed",
        "method_not_allowed",
        `GET is not allowed on /__sandbox/sessions/${s.id}/reset. Use POST.`,
        `/__sandbox/sessions/${s.id}/reset`,
        "method_not_allowed",
      ),
    );
    expect(r.headers.get("allow")).toBe("POST");
  });
});

describe("bounded sessions", () => {
  it("maxSessions: the session past the limit gets 429 too_many_sessions; a DELETE makes room", async () => {
    const t = await server({ maxSessions: 2 });
    const a = await createSession(t);
    await createSession(t);
    const third = await t.call("/__sandbox/sessions", postJson({}));
    expectProblem(
      third,
      problem(
        429,
        "Too Many Requests",
        "too_many_sessions",
        "This sandbox already holds 2 sessions. DELETE /__sandbox/sessions/{id} when a test is done, or wait for idle sessions to be reaped.",
        "/__sandbox/sessions",
        "rate_limited",
      ),
    );
    expect((await t.call("/__sandbox/sessions")).json.sessions).toHaveLength(2);
    expect((await t.call(`/__sandbox/sessions/${a.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await t.call("/__sandbox/sessions", postJson({}))).status).toBe(201);
  });

  it("limit under concurrency: a burst of 60 creations against maxSessions 5 gives exactly 5 × 201 and 55 × 429", async () => {
    const t = await server({ maxSessions: 5 });
    // A library scenario: its creation awaits the file read and a key of its own between the
    // limit's check and the session's insertion, the window the burst aims at.
    const burst = await Promise.all(Array.from({ length: 60 }, () => t.call("/__sandbox/sessions", postJson({ scenario: "signing-key-rotation" }))));
    const created = burst.filter((r) => r.status === 201);
    expect(created).toHaveLength(5);
    for (const r of burst.filter((r) => r.status !== 201)) expectProblem(r, TOO_MANY_OF_5);
    expect((await t.call("/__sandbox/sessions")).json.sessions).toHaveLength(5);
    expect(t.sandbox.sessions.size).toBe(5);
  });

  it("limit under concurrency: a creation that fails gives its reserved slot back", async () => {
    const t = await server({ maxSessions: 2 });
    // Each fails after its slot is taken (the profile is looked up while the scenario is made),
    // one after the other: more failures than the limit, so a slot kept by any of them shows.
    for (let i = 0; i < 5; i++) {
      const failed = await t.call("/__sandbox/sessions", postJson({ scenario: "signing-key-rotation", profile: "no-such-profile" }));
      expect([failed.status, failed.json.code]).toEqual([400, "session_profile_invalid"]);
    }
    const after = await Promise.all(Array.from({ length: 4 }, () => t.call("/__sandbox/sessions", postJson({ scenario: "signing-key-rotation" }))));
    expect(after.map((r) => r.status).sort()).toEqual([201, 201, 429, 429]);
    expect(t.sandbox.sessions.size).toBe(2);
  });

  it("reaps a session idle longer than sessionIdleTtl (wall-clock time): GET 404, credentials refused", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server({ sessionIdleTtl: "1s" });
    const s = await createSession(t);
    expect(s.expires_at).toBe(new Date(WALL + 1000).toISOString());
    const token = await tokenOf(t, s.merchant);

    // Using the session postpones its reaping.
    vi.setSystemTime(WALL + 800);
    expect((await pay(t, token)).status).toBe(200);
    vi.setSystemTime(WALL + 1500);
    const alive = await t.call(`/__sandbox/sessions/${s.id}`);
    expect(alive.status).toBe(200);
    expect(alive.json.expires_at).toBe(new Date(WALL + 1800).toISOString());

    // Idle past the limit: gone, whatever the (frozen) sandbox clock says.
    vi.setSystemTime(WALL + 1801);
    expectProblem(await t.call(`/__sandbox/sessions/${s.id}`), noSession(s.id));
    expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
    expectProblem(await exchange(t, s.merchant), unknownApiKey(s.merchant.api_key));
    expectProblem(await pay(t, token), TOKEN_UNKNOWN_MERCHANT);
    expectProblem(await paymentInit(t, s.merchant.payment_token), PAYMENT_TOKEN_UNKNOWN);
    expect((await login(t, s.merchant.login.email, s.merchant.login.password)).json).toEqual({ code: 401, message: "Invalid credentials." });
  });

  it("an idle session's credentials are refused from its expires_at on, even before any control-plane call", async () => {
    // The session says it expires at expires_at; an integration that comes back after that must
    // be refused, and its request must not bring the reaped session back to life.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server({ sessionIdleTtl: "1s" });
    const s = await createSession(t);
    const token = await tokenOf(t, s.merchant);

    vi.setSystemTime(WALL + 5000);
    expectProblem(await exchange(t, s.merchant), unknownApiKey(s.merchant.api_key));
    expectProblem(await pay(t, token), TOKEN_UNKNOWN_MERCHANT);
    expectProblem(await t.call(`/__sandbox/sessions/${s.id}`), noSession(s.id));
  });
});
