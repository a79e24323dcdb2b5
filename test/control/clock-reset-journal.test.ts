import { internalsOf } from "../../src/app/internals.js";
import { decodeJwt } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  DEFAULT_KEY,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  T0,
  createSession,
  postEmpty,
  postJson,
  problem,
  rawGet,
  type Reply,
  type TestServer,
  serversPerTest,
} from "../support/server.js";
import { expectProblem, RENEW_HINT } from "../support/expect.js";
import type { ScenarioFile } from "../../src/scenarios/schema.js";
import { redactUrl } from "../../src/core/redact.js";

/**
 * Black-box tests of the control plane's clock, reset and request journal (docs/control-plane.md), over real HTTP against the real node:http server, plus the same operations in library
 * mode. The sandbox clock starts frozen at T0 and is only moved through the control plane;
 * wall-clock time (the journal's `time`) is moved with vitest's fake Date, never slept on.
 */

const ISO_T0 = new Date(T0).toISOString();
const MIN = 60_000;
const LIMIT_RANGE = "limit must be a whole number from 1 to 1000 (the default); read a longer journal in pages with since=<the last id you got>.";
const WALL = Date.UTC(2030, 4, 6, 12, 0, 0);
const OUTAGE_KEY = { api_key: "token-endpoint-outage-key", api_secret: "token-endpoint-outage-secret" };
const OUTAGE_MERCHANT = "m_token_endpoint_outage";

/** A real server on port 0 for the current test, closed after it. */
const server = serversPerTest();

afterEach(() => {
  vi.useRealTimers();
});

// ---------------------------------------------------------------------------------------------
// helpers

const iso = (ms: number) => new Date(ms).toISOString();

function exchange(t: TestServer, m: { api_key: string; api_secret: string } = { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }): Promise<Reply> {
  return t.call("/api/v2/auth/token", postJson({ api_key: m.api_key, api_secret: m.api_secret }));
}

function pay(t: TestServer, token: string, path = "/api/v2/payment/orders"): Promise<Reply> {
  return t.call(path, { headers: { authorization: `Bearer ${token}` } });
}

function clock(t: TestServer, body: unknown): Promise<Reply> {
  return t.call("/__sandbox/clock", postJson(body));
}

/** A journal entry as GET /__sandbox/requests lists it: the fields the tests read, and the rest compared whole. */
interface JournalEntry {
  id: string;
  endpoint: string;
  status: number;
  path: string;
  [field: string]: unknown;
}

async function journal(t: TestServer, query = ""): Promise<JournalEntry[]> {
  const r = await t.call(`/__sandbox/requests${query}`);
  expect(r.status, r.text).toBe(200);
  return r.json.requests as JournalEntry[];
}

function expectClock(r: Reply, now: number, frozen: boolean): void {
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get("content-type")).toBe("application/json");
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.json).toEqual({ now: iso(now), frozen });
}

function tokenExpired(expAt: number, now: number, path = "/api/v2/payment/orders") {
  return problem(
    401,
    "Unauthorized",
    "token_expired",
    `The access token expired at ${iso(expAt)} (sandbox time is now ${iso(now)}). Renew it before it expires: ${RENEW_HINT}`,
    path,
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

function clockProblem(code: string, detail: string, where = "/__sandbox/clock") {
  return problem(400, "Bad Request", code, detail, where, "invalid_request");
}

const ADVANCE_INVALID = '"advance" must be a duration such as "90s", "59m", "1h" or "-5m" (or a number of seconds).';
const SET_INVALID = '"set" must be an ISO 8601 time such as "2026-01-01T00:00:00Z".';
const FREEZE_INVALID = '"freeze" must be true or false.';
const CHANGE_MISSING = 'POST /__sandbox/clock needs {"advance": "59m"}, {"set": "2026-01-01T00:00:00Z"} or {"freeze": true}.';

/** Every secret a flow may carry, and every JWT it was given, must be absent from `text`. */
function expectNoSecret(text: string, secrets: string[], jwts: string[]): void {
  // Booleans, so that a failure names what leaked without printing the journal (and the secret).
  const leaked = [
    ...secrets.filter((secret) => text.includes(secret)).map((secret) => `secret ${secret.slice(0, 4)}… (${secret.length} chars)`),
    ...jwts.flatMap((jwt, i) => {
      const [h, p, s] = jwt.split(".") as [string, string, string];
      return [
        text.includes(jwt) ? `JWT #${i} whole` : [],
        text.includes(s) ? `JWT #${i} signature` : [],
        text.includes(`${h}.${p}`) ? `JWT #${i} header.payload` : [],
      ].flat();
    }),
  ];
  expect(leaked).toEqual([]);
}

// ---------------------------------------------------------------------------------------------

describe("GET/POST /__sandbox/clock", () => {
  it("GET shows the sandbox clock", async () => {
    const t = await server();
    expectClock(await t.call("/__sandbox/clock"), T0, true);
  });

  it("advances, goes back, sets, and answers the new reading", async () => {
    const t = await server();
    expectClock(await clock(t, { advance: "59m" }), T0 + 59 * MIN, true);
    expectClock(await t.call("/__sandbox/clock"), T0 + 59 * MIN, true);
    expectClock(await clock(t, { advance: "-5m" }), T0 + 54 * MIN, true);
    expectClock(await clock(t, { advance: 90 }), T0 + 54 * MIN + 90_000, true);
    expectClock(await clock(t, { advance: "1h30m" }), T0 + 144 * MIN + 90_000, true);
    expectClock(await clock(t, { set: "2026-06-01T00:00:00Z" }), Date.UTC(2026, 5, 1), true);
    expectClock(await t.call("/__sandbox/clock"), Date.UTC(2026, 5, 1), true);
    expectClock(await clock(t, { set: "2026-06-01T02:00:00+02:00" }), Date.UTC(2026, 5, 1), true);
  });

  it("freeze: false lets the clock run with wall time from where it stood; freeze: true stops it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server();
    expectClock(await clock(t, { freeze: false }), T0, false);
    vi.setSystemTime(WALL + 5000);
    expectClock(await t.call("/__sandbox/clock"), T0 + 5000, false);
    expectClock(await clock(t, { freeze: true }), T0 + 5000, true);
    vi.setSystemTime(WALL + 60_000);
    expectClock(await t.call("/__sandbox/clock"), T0 + 5000, true);
    // Unfrozen again, and advanced: a running clock keeps its offset.
    expectClock(await clock(t, { freeze: false, advance: "1m" }), T0 + 65_000, false);
    vi.setSystemTime(WALL + 70_000);
    expectClock(await t.call("/__sandbox/clock"), T0 + 75_000, false);
    // Set on a running clock: it keeps running from there.
    expectClock(await clock(t, { set: "2026-06-01T00:00:00Z" }), Date.UTC(2026, 5, 1), false);
    vi.setSystemTime(WALL + 72_000);
    expectClock(await t.call("/__sandbox/clock"), Date.UTC(2026, 5, 1) + 2000, false);
  });

  it("combines set, advance and freeze in that order", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server();
    expectClock(await clock(t, { freeze: false, advance: "-30m", set: "2026-06-01T00:00:00Z" }), Date.UTC(2026, 4, 31, 23, 30), false);
    vi.setSystemTime(WALL + 1000);
    expectClock(await clock(t, { advance: "1h", set: "2026-06-01T00:00:00Z", freeze: true }), Date.UTC(2026, 5, 1, 1), true);
    vi.setSystemTime(WALL + 9000);
    expectClock(await t.call("/__sandbox/clock"), Date.UTC(2026, 5, 1, 1), true);
  });

  describe("refuses bad values with exact codes, and changes nothing", () => {
    const cases: Array<[string, RequestInit, ReturnType<typeof problem>]> = [
      ["advance: not a duration", postJson({ advance: "soon" }), clockProblem("clock_advance_invalid", ADVANCE_INVALID)],
      ["advance: empty", postJson({ advance: "" }), clockProblem("clock_advance_invalid", ADVANCE_INVALID)],
      ["advance: a boolean", postJson({ advance: true }), clockProblem("clock_advance_invalid", ADVANCE_INVALID)],
      ["advance: an object", postJson({ advance: { minutes: 5 } }), clockProblem("clock_advance_invalid", ADVANCE_INVALID)],
      ["set: not a time", postJson({ set: "next tuesday" }), clockProblem("clock_set_invalid", SET_INVALID)],
      ["set: a number", postJson({ set: 1767225600000 }), clockProblem("clock_set_invalid", SET_INVALID)],
      ["set: empty", postJson({ set: "" }), clockProblem("clock_set_invalid", SET_INVALID)],
      ["freeze: a string", postJson({ freeze: "yes" }), clockProblem("clock_freeze_invalid", FREEZE_INVALID)],
      ["freeze: a number", postJson({ freeze: 1 }), clockProblem("clock_freeze_invalid", FREEZE_INVALID)],
      ["an empty object", postJson({}), clockProblem("clock_change_missing", CHANGE_MISSING)],
      ["no body", postEmpty(), clockProblem("clock_change_missing", CHANGE_MISSING)],
      [
        "an unknown field",
        postJson({ tick: "1m" }),
        clockProblem("unknown_field", "POST /__sandbox/clock does not take 'tick'; it takes 'advance', 'set', 'freeze'."),
      ],
      [
        "an unknown field beside valid ones",
        postJson({ advance: "1m", frozen: true }),
        clockProblem("unknown_field", "POST /__sandbox/clock does not take 'frozen'; it takes 'advance', 'set', 'freeze'."),
      ],
      // A request with one bad value applies none of its good ones.
      [
        "a valid set with a bad advance",
        postJson({ set: "2026-06-01T00:00:00Z", advance: "later" }),
        clockProblem("clock_advance_invalid", ADVANCE_INVALID),
      ],
      ["a valid advance with a bad freeze", postJson({ advance: "1h", freeze: "no" }), clockProblem("clock_freeze_invalid", FREEZE_INVALID)],
      // Regression tests: an advance past year 9999 used to move the clock, answer 500, and leave
      // every later token, template and journal read failing until a reset.
      [
        "an advance past year 9999",
        postJson({ advance: "1000000000d" }),
        clockProblem(
          "clock_out_of_range",
          "This change would set the clock outside the dates tokens can carry: the clock would read 86401767225600000 ms after 1970, outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. Advance or set it by less.",
        ),
      ],
      [
        "a set before year 1",
        postJson({ set: "-000001-12-31T23:59:59Z" }),
        clockProblem(
          "clock_out_of_range",
          "This change would set the clock outside the dates tokens can carry: the clock would read -000001-12-31T23:59:59.000Z, outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. Advance or set it by less.",
        ),
      ],
      [
        "not JSON",
        { method: "POST", headers: { "content-type": "application/json" }, body: "{advance" },
        clockProblem(
          "body_malformed_json",
          'The request body is not valid JSON (syntax error at position 1). Send a JSON object such as {"advance": "59m"}.',
        ),
      ],
      // A body not declared as JSON: test/control/browser-access.test.ts (every control-plane POST).
    ];
    it.each(cases)("%s", async (_name, init, expected) => {
      const t = await server();
      expectProblem(await t.call("/__sandbox/clock", init), expected);
      expectClock(await t.call("/__sandbox/clock"), T0, true);
    });

    it("another method: 405 with Allow", async () => {
      const t = await server();
      const r = await t.call("/__sandbox/clock", { method: "DELETE" });
      expectProblem(
        r,
        problem(
          405,
          "Method Not Allowed",
          "method_not_allowed",
          "DELETE is not allowed on /__sandbox/clock. Use GET, HEAD or POST.",
          "/__sandbox/clock",
          "method_not_allowed",
        ),
      );
      expect(r.headers.get("allow")).toBe("GET, HEAD, POST");
    });
  });

  it("issuing and verifying both follow it: 61 minutes later a token from before answers 401 token_expired", async () => {
    const t = await server();
    const before = await t.token();
    expect(decodeJwt(before)).toMatchObject({ iat: T0 / 1000, exp: T0 / 1000 + 3600 });

    await clock(t, { advance: "59m" });
    expect((await pay(t, before)).status).toBe(200);
    await clock(t, { advance: "2m" });
    expectProblem(await pay(t, before), tokenExpired(T0 + 60 * MIN, T0 + 61 * MIN));
    expectProblem(
      await t.call("/api/v2/cashout/payouts", { method: "POST", headers: { authorization: `Bearer ${before}` } }),
      tokenExpired(T0 + 60 * MIN, T0 + 61 * MIN, "/api/v2/cashout/payouts"),
    );

    const issued = await exchange(t);
    expect(issued.json.expires_in).toBe(3600);
    const after = issued.json.access_token as string;
    expect(decodeJwt(after)).toMatchObject({ iat: T0 / 1000 + 61 * 60, exp: T0 / 1000 + 121 * 60 });
    const paid = await pay(t, after);
    expect(paid.status).toBe(200);
    expect(paid.json.expires_at).toBe(iso(T0 + 121 * MIN));
    // payment/init dates its payment on the same clock.
    const init = await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` } });
    expect(init.json.created_at).toBe(iso(T0 + 61 * MIN));
  });

  it("moving the clock back makes a token issued later not valid yet", async () => {
    const t = await server();
    await clock(t, { advance: "1h" });
    const later = await t.token();
    await clock(t, { advance: "-5m" });
    expectProblem(
      await pay(t, later),
      problem(
        401,
        "Unauthorized",
        "token_not_yet_valid",
        `The token says it was issued at ${iso(T0 + 60 * MIN)}, after the sandbox's current time ${iso(T0 + 55 * MIN)}. Check the clocks, then request a new access token from POST /api/v2/auth/token.`,
        "/api/v2/payment/orders",
        "invalid_token",
      ),
    );
    const back = await t.token();
    expect(decodeJwt(back).iat).toBe(T0 / 1000 + 55 * 60);
  });
});

describe("POST /__sandbox/reset", () => {
  it("brings the whole sandbox back: scenarios at their start, sessions gone, journal empty, old tokens revoked, clock at T0", async () => {
    const t = await server({ scenarios: ["token-endpoint-outage"] });
    expect((await exchange(t, OUTAGE_KEY)).status).toBe(503);
    expect((await exchange(t, OUTAGE_KEY)).status).toBe(503);
    const outageToken = (await exchange(t, OUTAGE_KEY)).json.access_token as string;
    const defaultToken = await t.token();
    const session = (await t.call("/__sandbox/sessions", postJson({}))).json;
    const sessionToken = (await exchange(t, session.merchant)).json.access_token as string;
    expect((await pay(t, outageToken)).status).toBe(200);
    expect((await pay(t, defaultToken)).status).toBe(200);
    await clock(t, { advance: "30m" });
    // Three outage exchanges, the default and the session exchange, two payments: control calls are not journaled.
    expect((await journal(t)).map((e) => `${e.endpoint} ${e.status}`)).toEqual([
      "token 503",
      "token 503",
      "token 200",
      "token 200",
      "token 200",
      "payment 200",
      "payment 200",
    ]);

    const reset = await t.call("/__sandbox/reset", postEmpty());
    expect(reset.status).toBe(200);
    expect(reset.headers.get("content-type")).toBe("application/json");
    expect(reset.headers.get("cache-control")).toBe("no-store");
    expect(reset.json).toEqual({ reset: true, scenarios: ["token-endpoint-outage", "default"], clock: { now: ISO_T0, frozen: true } });

    expectClock(await t.call("/__sandbox/clock"), T0, true);
    expect(await journal(t)).toEqual([]);
    expect((await t.call("/__sandbox/requests")).json).toEqual({ requests: [], capacity: 1000 });
    expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
    expect((await t.call(`/__sandbox/sessions/${session.id}`)).status).toBe(404);
    expect((await exchange(t, session.merchant)).json.code).toBe("unknown_api_key");
    expect((await pay(t, sessionToken)).json.code).toBe("token_unknown_merchant");

    expectProblem(await pay(t, defaultToken), TOKEN_REVOKED);
    expectProblem(await pay(t, outageToken), TOKEN_REVOKED);
    // The scenario starts over: the outage happens again.
    const again = await exchange(t, OUTAGE_KEY);
    expect(again.status).toBe(503);
    expect(again.headers.get("retry-after")).toBe("30");
    expect((await exchange(t, OUTAGE_KEY)).status).toBe(503);
    const fresh = await exchange(t, OUTAGE_KEY);
    expect(fresh.status).toBe(200);
    expect((await pay(t, fresh.json.access_token)).status).toBe(200);
    // Tokens issued after the reset work, at the same frozen instant as the revoked ones.
    const newDefault = await t.token();
    expect(decodeJwt(newDefault).iat).toBe(T0 / 1000);
    expect((await pay(t, newDefault)).status).toBe(200);
    // The journal starts filling again with the requests after the reset.
    expect((await journal(t)).map((e) => e.status)).toEqual([401, 401, 401, 401, 503, 503, 200, 200, 200, 200]);
  });

  it("a sandbox started with a running clock runs again after a reset", async () => {
    const t = await server({ frozenAt: undefined });
    expectClock(await clock(t, { set: "2020-01-01T00:00:00Z", freeze: true }), Date.UTC(2020, 0, 1), true);
    const reset = await t.call("/__sandbox/reset", postEmpty());
    expect(reset.json.clock.frozen).toBe(false);
    const now = Date.parse((await t.call("/__sandbox/clock")).json.now);
    expect(Math.abs(now - Date.now())).toBeLessThan(60_000);
  });

  it("takes only POST", async () => {
    const t = await server();
    const r = await t.call("/__sandbox/reset");
    expectProblem(
      r,
      problem(
        405,
        "Method Not Allowed",
        "method_not_allowed",
        "GET is not allowed on /__sandbox/reset. Use POST.",
        "/__sandbox/reset",
        "method_not_allowed",
      ),
    );
    expect(r.headers.get("allow")).toBe("POST");
  });
});

describe("GET /__sandbox/requests: the request journal", () => {
  it("records each request in order with exact fields: exchange, payment call, refusal, rule-shaped answer", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server({ scenarios: ["token-endpoint-outage"] });
    const token = await t.token();
    const jti = decodeJwt(token).jti as string;
    vi.setSystemTime(WALL + 1000);
    await pay(t, token, "/api/v2/payment/orders/42");
    vi.setSystemTime(WALL + 2000);
    await t.call("/api/v2/auth/token", { method: "POST", headers: { "x-api-key": DEFAULT_KEY, "x-api-secret": "not-the-secret" } });
    vi.setSystemTime(WALL + 3000);
    await exchange(t, OUTAGE_KEY);
    vi.setSystemTime(WALL + 4000);
    await t.call("/api/v2/cashout/payouts?amount=5");
    await clock(t, { advance: "61m" });
    vi.setSystemTime(WALL + 5000);
    await t.call("/api/v2/payment/orders", { method: "POST", headers: { authorization: `Bearer ${token}` } });

    const r = await t.call("/__sandbox/requests");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const base = { durationMs: expect.any(Number), query: "", sandboxTime: ISO_T0 };
    expect(r.json).toEqual({
      capacity: 1000,
      requests: [
        {
          ...base,
          id: "req_1",
          seq: 1,
          time: iso(WALL),
          method: "POST",
          path: "/api/v2/auth/token",
          status: 200,
          endpoint: "token",
          scenario: "default",
          merchant: DEFAULT_MERCHANT_ID,
          tokenId: jti,
          // The default scenario's one-hour token, on the frozen clock.
          tokenExpiresAt: iso(T0 + 60 * MIN),
          credentialSources: { apiKey: "body", apiSecret: "body" },
        },
        {
          ...base,
          id: "req_2",
          seq: 2,
          time: iso(WALL + 1000),
          method: "GET",
          path: "/api/v2/payment/orders/42",
          status: 200,
          endpoint: "payment",
          scenario: "default",
          merchant: DEFAULT_MERCHANT_ID,
          tokenId: jti,
          presentedTokenId: jti,
        },
        {
          ...base,
          id: "req_3",
          seq: 3,
          time: iso(WALL + 2000),
          method: "POST",
          path: "/api/v2/auth/token",
          status: 401,
          endpoint: "token",
          scenario: "default",
          merchant: DEFAULT_MERCHANT_ID,
          // A wrong secret only names the merchant: marked so, it counts in none of its findings.
          unverified: true,
          code: "wrong_api_secret",
          credentialSources: { apiKey: "header", apiSecret: "header" },
        },
        {
          ...base,
          id: "req_4",
          seq: 4,
          time: iso(WALL + 3000),
          method: "POST",
          path: "/api/v2/auth/token",
          status: 503,
          endpoint: "token",
          scenario: "token-endpoint-outage",
          merchant: OUTAGE_MERCHANT,
          rules: ["token-endpoint-outage/outage"],
          retryAfter: 30,
        },
        {
          ...base,
          id: "req_5",
          seq: 5,
          time: iso(WALL + 4000),
          method: "GET",
          path: "/api/v2/cashout/payouts",
          query: "amount=5",
          status: 401,
          endpoint: "cashout",
          // No credentials: attributed to no merchant, so the primary scenario.
          scenario: "token-endpoint-outage",
          code: "credentials_missing",
        },
        {
          ...base,
          id: "req_6",
          seq: 6,
          time: iso(WALL + 5000),
          sandboxTime: iso(T0 + 61 * MIN),
          method: "POST",
          path: "/api/v2/payment/orders",
          status: 401,
          endpoint: "payment",
          scenario: "default",
          merchant: DEFAULT_MERCHANT_ID,
          presentedTokenId: jti,
          code: "token_expired",
          // The clock jumped from 0 to 61 min, over the token's renewal window: not the client's doing.
          tokenExpiry: "clock_jump",
        },
      ],
    });
  });

  it("filters by session, merchant, since (a request id or an ISO time) and limit", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(WALL);
    const t = await server();
    const s = (await t.call("/__sandbox/sessions", postJson({}))).json;
    await t.token(); // req_1 default
    const sessionToken = (await exchange(t, s.merchant)).json.access_token as string; // req_2 session
    vi.setSystemTime(WALL + 10_000);
    await pay(t, sessionToken); // req_3 session
    await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` } }); // req_4 default
    vi.setSystemTime(WALL + 20_000);
    await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${s.merchant.payment_token}` } }); // req_5 session
    await t.call("/api/v2/nothing-here"); // req_6 unattributed

    const ids = (entries: JournalEntry[]) => entries.map((e) => e.id);
    expect(ids(await journal(t))).toEqual(["req_1", "req_2", "req_3", "req_4", "req_5", "req_6"]);

    const bySession = await journal(t, `?session=${s.id}`);
    expect(ids(bySession)).toEqual(["req_2", "req_3", "req_5"]);
    for (const e of bySession) expect(e).toMatchObject({ session: s.id, merchant: s.merchant.id, scenario: "default" });
    expect(bySession.map((e) => e.endpoint)).toEqual(["token", "payment", "payment-init"]);

    expect(ids(await journal(t, `?merchant=${DEFAULT_MERCHANT_ID}`))).toEqual(["req_1", "req_4"]);
    expect(ids(await journal(t, `?merchant=${encodeURIComponent(s.merchant.id)}`))).toEqual(["req_2", "req_3", "req_5"]);
    expect(await journal(t, "?merchant=nobody")).toEqual([]);
    expect(await journal(t, "?session=ses_0000000000000000")).toEqual([]);

    expect(ids(await journal(t, "?since=req_3"))).toEqual(["req_4", "req_5", "req_6"]);
    expect(ids(await journal(t, "?since=req_6"))).toEqual([]);
    expect(ids(await journal(t, "?since=req_0"))).toEqual(["req_1", "req_2", "req_3", "req_4", "req_5", "req_6"]);
    expect(ids(await journal(t, `?since=${encodeURIComponent(iso(WALL + 5000))}`))).toEqual(["req_3", "req_4", "req_5", "req_6"]);
    expect(ids(await journal(t, `?since=${encodeURIComponent(iso(WALL + 15_000))}`))).toEqual(["req_5", "req_6"]);
    expect(ids(await journal(t, `?since=${encodeURIComponent(iso(WALL + 20_000))}`))).toEqual([]);

    // limit keeps the most recent entries, oldest first.
    expect(ids(await journal(t, "?limit=2"))).toEqual(["req_5", "req_6"]);
    expect(ids(await journal(t, "?limit=100"))).toHaveLength(6);
    expect(ids(await journal(t, `?session=${s.id}&limit=1`))).toEqual(["req_5"]);
    expect(ids(await journal(t, `?session=${s.id}&since=req_2`))).toEqual(["req_3", "req_5"]);
    expect(ids(await journal(t, `?merchant=${DEFAULT_MERCHANT_ID}&since=req_1`))).toEqual(["req_4"]);
  });

  describe("refuses parameters it does not take", () => {
    const cases: Array<[string, string, string]> = [
      [
        "?sessions=x",
        "unknown_parameter",
        "GET /__sandbox/requests does not take 'sessions'; it takes session, merchant, since (a request id or ISO time) and limit.",
      ],
      [
        "?limit=5&offset=2",
        "unknown_parameter",
        "GET /__sandbox/requests does not take 'offset'; it takes session, merchant, since (a request id or ISO time) and limit.",
      ],
      ["?limit=0", "limit_invalid", LIMIT_RANGE],
      ["?limit=ten", "limit_invalid", LIMIT_RANGE],
      ["?limit=2.5", "limit_invalid", LIMIT_RANGE],
      ["?limit=1001", "limit_invalid", LIMIT_RANGE],
      ["?limit=1e9", "limit_invalid", LIMIT_RANGE],
      ["?since=yesterday", "since_invalid", "since must be a request id such as req_12, or an ISO time such as 2026-01-01T00:00:00Z."],
    ];
    it.each(cases)("%s → 400 %s", async (query, code, detail) => {
      const t = await server();
      expectProblem(await t.call(`/__sandbox/requests${query}`), problem(400, "Bad Request", code, detail, "/__sandbox/requests", "invalid_request"));
    });
  });

  it("is bounded: with journalSize 3 only the last 3 requests are kept, the oldest dropped first", async () => {
    const t = await server({ journalSize: 3 });
    for (let i = 1; i <= 5; i++) await t.call(`/api/v2/payment/call-${i}`);
    const r = await t.call("/__sandbox/requests");
    expect(r.json.capacity).toBe(3);
    expect((r.json.requests as JournalEntry[]).map((e) => [e.id, e.path])).toEqual([
      ["req_3", "/api/v2/payment/call-3"],
      ["req_4", "/api/v2/payment/call-4"],
      ["req_5", "/api/v2/payment/call-5"],
    ]);
    await t.call("/api/v2/payment/call-6");
    expect((await journal(t)).map((e) => e.id)).toEqual(["req_4", "req_5", "req_6"]);
    expect((await journal(t, "?since=req_1")).map((e) => e.id)).toEqual(["req_4", "req_5", "req_6"]);
    expect((await journal(t, "?limit=2")).map((e) => e.id)).toEqual(["req_5", "req_6"]);
  });

  it("bounded memory: an entry keeps at most 1,024 characters of path and of query, cut after the redaction and marked", async () => {
    const t = await server();
    const jwt = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZXJjaGFudCJ9.${"s".repeat(43)}`;
    // The token straddles the cut: cut first, its head would no longer look like a token, and stay.
    const longPath = `/api/v2/payment/${"p".repeat(1000)}/${jwt}/${"\\".repeat(3000)}`;
    const longQuery = `q=${"x".repeat(1100)}`;
    const r = await rawGet(t, `${longPath}?${longQuery}`, []);
    expect(r.status).toBe(401);
    const [entry] = await journal(t);
    const shownPath = redactUrl(longPath, "", internalsOf(t.sandbox).merchants.secrets.view()).path;
    expect(shownPath).not.toContain(jwt.slice(0, 20));
    expect(entry!.path).toBe(`${shownPath.slice(0, 1024)}…(${shownPath.length - 1024} more chars)`);
    expect(entry!.path).not.toContain(jwt.slice(0, 20));
    expect(entry!.query).toBe(`${longQuery.slice(0, 1024)}…(78 more chars)`);
    // Within the cap, as it came.
    await t.call(`/api/v2/payment/${"p".repeat(1008)}?q=${"x".repeat(1022)}`);
    const [, within] = await journal(t);
    expect([within!.path, within!.query]).toEqual([`/api/v2/payment/${"p".repeat(1008)}`, `q=${"x".repeat(1022)}`]);
  });

  it("bounded memory: a listing returns at most 1,000 entries (the default), whatever the journal's size; more in pages with since", async () => {
    const t = await server({ journalSize: 1005 });
    for (let i = 1; i <= 1005; i++) {
      await t.sandbox.handle({
        method: "GET",
        path: `/api/v2/payment/call-${i}`,
        query: "",
        headers: { host: "127.0.0.1" },
        body: new Uint8Array(0),
      });
    }
    const all = await journal(t);
    expect([all.length, all[0]!.id, all.at(-1)!.id]).toEqual([1000, "req_6", "req_1005"]);
    expect((await journal(t, "?limit=1000")).length).toBe(1000);
    const first = await journal(t, "?since=req_0");
    expect([first.length, first[0]!.id, first.at(-1)!.id]).toEqual([1000, "req_1", "req_1000"]);
    expect((await journal(t, "?since=req_1000")).map((e) => e.id)).toEqual(["req_1001", "req_1002", "req_1003", "req_1004", "req_1005"]);
  });

  it("does not record control-plane calls", async () => {
    const t = await server();
    const s = (await t.call("/__sandbox/sessions", postJson({}))).json;
    await t.call("/__sandbox/health");
    await t.call("/__sandbox/sessions");
    await t.call(`/__sandbox/sessions/${s.id}`);
    await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: "1m" }));
    await clock(t, { advance: "1m" });
    await t.call("/__sandbox/clock");
    await t.call("/__sandbox/tokens", postJson({ variant: "expired" }));
    await t.call("/__sandbox/requests?limit=1");
    await t.call("/__sandbox/unknown");
    await t.call("/__sandbox/clock", postJson({ advance: "bad" }));
    expect(await journal(t)).toEqual([]);
    await t.call("/.well-known/jwks.json");
    const entries = await journal(t);
    expect(entries.map((e) => [e.id, e.endpoint, e.path])).toEqual([["req_1", "jwks", "/.well-known/jwks.json"]]);
  });

  it("never holds a secret: api_secret, passwords, payment tokens, JWTs (whole or signature); but holds the jti", async () => {
    const t = await server({ scenarios: ["token-endpoint-outage"] });
    const s = (await t.call("/__sandbox/sessions", postJson({}))).json;
    const wrongSecret = "wrong-secret-that-must-not-leak-0123456789";
    const wrongPassword = "wrong-password-that-must-not-leak-987";
    const json = { "content-type": "application/json" };
    const jwts: string[] = [];

    for (const m of [{ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }, s.merchant, OUTAGE_KEY]) {
      const body = await exchange(t, m);
      if (body.status === 200) jwts.push(body.json.access_token);
      const viaHeaders = await t.call("/api/v2/auth/token", { method: "POST", headers: { "x-api-key": m.api_key, "x-api-secret": m.api_secret } });
      if (viaHeaders.status === 200) jwts.push(viaHeaders.json.access_token);
    }
    for (const [email, password] of [
      ["merchant@sandbox.test", "sandbox-password"],
      [s.merchant.login.email, s.merchant.login.password],
    ]) {
      const ok = await t.call("/api/login_check", postJson({ username: email, password }));
      expect(ok.status).toBe(200);
      jwts.push(ok.json.token);
      await t.call("/api/login_check", postJson({ username: email, password: wrongPassword }));
    }
    const minted = (await t.call("/__sandbox/tokens", postJson({ variant: "valid" }))).json.token as string;
    jwts.push(minted);
    expect(jwts.length).toBeGreaterThanOrEqual(7);

    const [token, sessionToken] = [jwts[0]!, jwts[2]!];
    for (const jwt of [token, sessionToken, minted]) {
      await pay(t, jwt);
      await t.call("/api/v2/cashout/payouts", { method: "POST", headers: { authorization: `Bearer ${jwt}` } });
      await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${jwt}` } });
      await t.call(`/api/v2/payment/orders?access_token=${jwt}&api_secret=${DEFAULT_SECRET}`);
      await t.call(`/api/v2/payment/orders?token=${jwt}&password=sandbox-password`, { headers: { authorization: `Bearer ${jwt}` } });
      await t.call("/api/v2/payment/orders", { headers: { authorization: `Bearer ${jwt}x` } });
      await t.call("/api/v2/payment/orders", { headers: { authorization: `Basic ${jwt}` } });
    }
    for (const paymentToken of [DEFAULT_PAYMENT_TOKEN, s.merchant.payment_token]) {
      await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${paymentToken}` } });
      await pay(t, paymentToken);
      await t.call(`/api/v2/payment/init?payment_token=${paymentToken}`, { method: "POST", headers: { authorization: `Bearer ${paymentToken}` } });
    }
    for (const apiKey of [DEFAULT_KEY, s.merchant.api_key]) {
      await t.call("/api/v2/auth/token", { method: "POST", headers: json, body: JSON.stringify({ api_key: apiKey, api_secret: wrongSecret }) });
      await t.call("/api/v2/auth/token", { method: "POST", headers: json, body: `{"api_key":"${apiKey}","api_secret":"${wrongSecret}` });
      await t.call("/api/v2/auth/token", {
        method: "POST",
        headers: { "x-api-key": apiKey, "x-api-secret": wrongSecret },
        body: JSON.stringify({ api_secret: DEFAULT_SECRET }),
      });
      await t.call(`/api/v2/auth/token?api_key=${apiKey}&api_secret=${wrongSecret}&secret=${DEFAULT_SECRET}`, { method: "POST" });
    }
    // Secrets where the api_key should be (swapped fields).
    await t.call("/api/v2/auth/token", postJson({ api_key: DEFAULT_SECRET, api_secret: DEFAULT_KEY }));
    await t.call("/api/v2/auth/token", postJson({ api_key: s.merchant.api_secret, api_secret: s.merchant.api_key }));

    const entries = await journal(t);
    expect(entries.length).toBeGreaterThan(40);
    const all = JSON.stringify(entries);
    expectNoSecret(
      all,
      [
        DEFAULT_SECRET,
        "sandbox-password",
        DEFAULT_PAYMENT_TOKEN,
        "token-endpoint-outage-secret",
        s.merchant.api_secret,
        s.merchant.login.password,
        s.merchant.payment_token,
        wrongSecret,
        wrongPassword,
      ],
      jwts,
    );
    // What it does hold: the token ids, and that a secret went through the query string.
    for (const jwt of [token, sessionToken, jwts[1]!]) expect(all).toContain(decodeJwt(jwt).jti as string);
    expect(entries.some((e) => e.secretInQuery === true)).toBe(true);
    expect(entries.filter((e) => e.secretInQuery).every((e) => /\.\.\.\(\d+ chars, sha256:[0-9a-f]{8}\)/.test(String(e.query)))).toBe(true);
    // The same holds for the library view of the journal.
    expectNoSecret(JSON.stringify(t.sandbox.journal.list()), [DEFAULT_SECRET, s.merchant.api_secret, DEFAULT_PAYMENT_TOKEN], jwts);
  });

  it("never holds a JWT or a secret sent under another query parameter name", async () => {
    // docs/configuration.md: JWTs never appear in clear in the request journal. A JWT is recognisable by its
    // shape, whatever the parameter is called (accessToken, id_token, auth …), and client_secret /
    // apiSecret are the api_secret under other spellings.
    const t = await server();
    const token = await t.token();
    await t.call(`/api/v2/payment/orders?accessToken=${token}`, { headers: { authorization: `Bearer ${token}` } });
    await t.call(`/api/v2/payment/orders?id_token=${token}&auth=${token}`, { headers: { authorization: `Bearer ${token}` } });
    await t.call(`/api/v2/payment/orders?client_secret=${DEFAULT_SECRET}&apiSecret=${DEFAULT_SECRET}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expectNoSecret(JSON.stringify(await journal(t)), [DEFAULT_SECRET], [token]);
  });
});

describe("GET /__sandbox/requests: tokenExpiresAt, when each issued token expires", () => {
  /** A scenario whose clock runs two hours ahead, with 15-minute tokens; its 2nd exchange gets a token already expired. */
  const AHEAD: ScenarioFile = {
    name: "ahead-short-tokens",
    description: "Clock ahead, short tokens.",
    merchants: [{ id: "m_ahead", api_key: "ahead-key", api_secret: "ahead-secret", payment_token: "ahead-payment-token" }],
    settings: { clock_offset: "2h", token_ttl: "15m" },
    rules: [{ name: "expired-second", match: { endpoint: "token", calls: { nth: 2 } }, then: { issue_token: { expired: true } } }],
  };
  const expiries = async (t: TestServer, query = "") => (await journal(t, query)).map((e) => [e.endpoint, e.status, e.sandboxTime, e.tokenExpiresAt]);

  it("is the token's exp on the issuing scenario's clock: its offset, its TTL, a token issued already expired, the login's; absent elsewhere", async () => {
    const t = await server({ scenarios: [AHEAD] });
    const ahead = { api_key: "ahead-key", api_secret: "ahead-secret" };
    const token = decodeJwt((await exchange(t, ahead)).json.access_token);
    await exchange(t, ahead);
    await exchange(t, { ...ahead, api_secret: "wrong" });
    await pay(t, (await exchange(t)).json.access_token);
    await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
    const T2H = T0 + 120 * MIN;
    expect(await expiries(t)).toEqual([
      ["token", 200, iso(T2H), iso(T2H + 15 * MIN)],
      // Issued a TTL and a second before the scenario's now (issue_token: expired).
      ["token", 200, iso(T2H), iso(T2H - 1000)],
      ["token", 401, iso(T2H), undefined],
      ["token", 200, ISO_T0, iso(T0 + 60 * MIN)],
      ["payment", 200, ISO_T0, undefined],
      ["login", 200, ISO_T0, iso(T0 + 60 * MIN)],
    ]);
    expect(iso((token.exp as number) * 1000)).toBe(iso(T2H + 15 * MIN));
  });

  it("follows a session's own clock, as moved by the control plane", async () => {
    const t = await server();
    const s = await createSession(t);
    expect((await t.call(`/__sandbox/sessions/${s.id}/clock`, postJson({ advance: "10m" }))).status).toBe(200);
    await exchange(t, s.merchant);
    expect(await expiries(t, `?session=${s.id}`)).toEqual([["token", 200, iso(T0 + 10 * MIN), iso(T0 + 70 * MIN)]]);
  });
});

describe("library mode: the same operations on the sandbox object", () => {
  it("sessions.create(), journal.list(), mintToken(), clock and reset() behave as their HTTP counterparts", async () => {
    const t = await server();
    const { sandbox } = t;

    // sessions.create(): the same session as POST /__sandbox/sessions, visible over HTTP.
    const session = await sandbox.sessions.create("token-endpoint-outage");
    // With the Host the HTTP client sends, as POST /__sandbox/sessions builds its base_url; without one, the path alone.
    const info = sandbox.sessions.info(session, new URL(t.url).host);
    expect(info.id).toMatch(/^ses_[0-9a-f]{16}$/);
    expect(info.base_url).toBe(`${t.url}/s/${info.id}`);
    expect(sandbox.sessions.info(session).base_url).toBe(`/s/${info.id}`);
    expect(info.scenario).toBe("token-endpoint-outage");
    const viaHttp = await t.call(`/__sandbox/sessions/${info.id}`);
    expect(viaHttp.status).toBe(200);
    // One session's answer adds its state, clock and history (none yet) to what the list shows.
    expect(viaHttp.json).toEqual({ ...info, state: "started", clock: { now: ISO_T0, frozen: true }, history: [], history_dropped: 0 });
    expect((await exchange(t, info.merchant)).status).toBe(503);
    expect((await exchange(t, info.merchant)).status).toBe(503);
    const sessionToken = (await exchange(t, info.merchant)).json.access_token as string;
    expect((await pay(t, sessionToken)).status).toBe(200);
    expect(sandbox.sessions.list().map((s) => s.id)).toEqual([info.id]);
    const defaultToken = (await sandbox.mintToken()).token;

    // journal.list(): the same entries as GET /__sandbox/requests, with the same filters.
    expect(sandbox.journal.list()).toEqual(await journal(t));
    expect(sandbox.journal.list({ session: info.id })).toEqual(await journal(t, `?session=${info.id}`));
    expect(sandbox.journal.list({ since: "req_2", limit: 1 })).toEqual(await journal(t, "?since=req_2&limit=1"));
    expect(sandbox.journal.list().map((e) => e.status)).toEqual([503, 503, 200, 200]);

    // mintToken(): the same catalogue as POST /__sandbox/tokens.
    const minted = await sandbox.mintToken({ variant: "expired" });
    expect(minted).toMatchObject({ variant: "expired", expected_error: "token_expired", claims: { sub: DEFAULT_MERCHANT_ID, exp: T0 / 1000 - 60 } });
    expect(decodeJwt(minted.token)).toEqual(minted.claims);
    expectProblem(await pay(t, minted.token), tokenExpired(T0 - MIN, T0));
    const valid = await sandbox.mintToken({ merchant: info.merchant.api_key });
    expect(valid.expected_error).toBeNull();
    expect((await pay(t, valid.token)).json.merchant_id).toBe(info.merchant.id);

    // clock: the same clock as /__sandbox/clock.
    sandbox.clock.advance(61 * MIN);
    expectClock(await t.call("/__sandbox/clock"), T0 + 61 * MIN, true);
    expect((await pay(t, sessionToken)).json.code).toBe("token_expired");

    // reset(): as POST /__sandbox/reset.
    sandbox.reset();
    expect(sandbox.sessions.list()).toEqual([]);
    expect(sandbox.journal.list()).toEqual([]);
    expectClock(await t.call("/__sandbox/clock"), T0, true);
    expect((await t.call("/__sandbox/sessions")).json).toEqual({ sessions: [] });
    expect((await exchange(t, info.merchant)).json.code).toBe("unknown_api_key");
    expectProblem(await pay(t, defaultToken), TOKEN_REVOKED);
    expect((await pay(t, await t.token())).status).toBe(200);

    // The library reports the same refusals as the control plane.
    await expect(sandbox.sessions.create("no-such-scenario")).rejects.toThrow(/no scenario named 'no-such-scenario'/);
    await expect(sandbox.mintToken({ merchant: "nobody" })).rejects.toMatchObject({ code: "not_found", status: 404 });
  });

  it("library sessions respect maxSessions", async () => {
    const t = await server({ maxSessions: 1 });
    await t.sandbox.sessions.create();
    await expect(t.sandbox.sessions.create()).rejects.toMatchObject({ code: "too_many_sessions", status: 429 });
    expect((await t.call("/__sandbox/sessions", postJson({}))).json.code).toBe("too_many_sessions");
  });
});
