import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCliServer, type CliProcess } from "../support/cli.js";
import {
  DEFAULT_KEY,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  T0,
  postEmpty,
  postJson,
  problem,
  startTestServer,
  type Reply,
  type TestServer,
  serversPerTest,
} from "../support/server.js";
import { expectProblem, ISSUER, AUDIENCE } from "../support/expect.js";

/**
 * Black-box tests of POST /__sandbox/tokens (the catalogue of good and deliberately bad tokens),
 * of the admin token that guards the control plane, and of --no-control-plane: over real HTTP
 * against the real node:http server, and through the real CLI binary.
 */

const T0S = T0 / 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const VARIANTS = [
  "valid",
  "expired",
  "not_yet_valid",
  "wrong_audience",
  "wrong_issuer",
  "unknown_kid",
  "foreign_key",
  "alg_none",
  "bad_signature",
  "login_token",
] as const;
type Variant = (typeof VARIANTS)[number];

const EXPECTED_ERROR: Record<Variant, string | null> = {
  valid: null,
  expired: "token_expired",
  not_yet_valid: "token_not_yet_valid",
  wrong_audience: "token_wrong_audience",
  wrong_issuer: "token_wrong_issuer",
  unknown_kid: "token_unknown_kid",
  foreign_key: "token_unknown_kid",
  alg_none: "token_algorithm_rejected",
  bad_signature: "token_signature_invalid",
  // Accepted by default (the loginToken setting); see the test with loginToken refused.
  login_token: null,
};

const ADMIN_MISSING =
  "This sandbox's control plane needs the admin token: send 'Authorization: Bearer <admin token>' or 'X-Admin-Token: <admin token>'.";
const ADMIN_WRONG = "The admin token is wrong. Send the token the sandbox was started with (--admin-token / MERCHANT_SANDBOX_ADMIN_TOKEN).";
const PLANE_OFF = "The control plane is turned off (--no-control-plane); only GET /__sandbox/health answers.";

/** A real server on port 0 for the current test, closed after it. */
const server = serversPerTest();

// ---------------------------------------------------------------------------------------------
// helpers

function mint(t: TestServer, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return t.call("/__sandbox/tokens", postJson(body, headers));
}

function pay(t: TestServer, token: string): Promise<Reply> {
  return t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } });
}

/** The token's refusal on GET /api/v2/payment/x is exactly `code`, as RFC 6750 invalid_token. */
function expectRefusedWith(r: Reply, code: string): void {
  expect(r.status, r.text).toBe(401);
  expect(r.headers.get("content-type")).toBe("application/problem+json");
  expect(r.json).toEqual(problem(401, "Unauthorized", code, r.json.detail, "/api/v2/payment/x", "invalid_token"));
  expect(r.json.detail).toEqual(expect.any(String));
  expect(r.headers.get("www-authenticate")).toMatch(/^Bearer realm="merchant-api", error="invalid_token", error_description="[^"]+"$/);
}

async function kidOf(t: TestServer): Promise<string> {
  const jwks = await t.call("/.well-known/jwks.json");
  expect(jwks.json.keys).toHaveLength(1);
  return jwks.json.keys[0].kid as string;
}

function adminProblem(detail: string, path: string) {
  return problem(401, "Unauthorized", "admin_token_required", detail, path, "invalid_token");
}

/**
 * 401 admin_token_required, exact, with the challenge every 401 must carry (RFC 9110 §15.5.2):
 * bare when no admin token was sent, with error="invalid_token" when a wrong one was.
 */
function expectAdminRefusal(r: Reply, detail: string, path: string): void {
  const safe = detail.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, (ch) => (ch === '"' ? "'" : "?"));
  const challenge =
    detail === ADMIN_MISSING ? 'Bearer realm="merchant-api"' : `Bearer realm="merchant-api", error="invalid_token", error_description="${safe}"`;
  expectProblem(r, adminProblem(detail, path), { headers: { "www-authenticate": challenge } });
}

function planeOff(path: string) {
  return problem(404, "Not Found", "not_found", PLANE_OFF, path, "not_found");
}

/** One request to each control-plane route (health excepted). */
const CONTROL_CALLS: Array<[string, string, unknown?]> = [
  ["GET", "/__sandbox/clock"],
  ["POST", "/__sandbox/clock", { advance: "1m" }],
  ["GET", "/__sandbox/sessions"],
  ["POST", "/__sandbox/sessions", {}],
  ["GET", "/__sandbox/sessions/ses_0123456789abcdef"],
  ["DELETE", "/__sandbox/sessions/ses_0123456789abcdef"],
  ["GET", "/__sandbox/sessions/ses_0123456789abcdef/clock"],
  ["POST", "/__sandbox/sessions/ses_0123456789abcdef/clock", { advance: "1m" }],
  ["POST", "/__sandbox/sessions/ses_0123456789abcdef/reset"],
  ["GET", "/__sandbox/sessions/ses_0123456789abcdef/report"],
  ["POST", "/__sandbox/reset"],
  ["GET", "/__sandbox/requests"],
  ["GET", "/__sandbox/report"],
  ["POST", "/__sandbox/tokens", { variant: "valid" }],
  ["GET", "/__sandbox/openapi.json"],
];

function init(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  if (body !== undefined) return { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
  // A control-plane POST is declared JSON even without a body.
  return method === "POST" ? postEmpty(headers) : { method, headers };
}

// ---------------------------------------------------------------------------------------------

describe("POST /__sandbox/tokens", () => {
  it.each(VARIANTS)("%s: 201 with token, variant, header, claims and expected_error; the sandbox refuses it with exactly that", async (variant) => {
    const t = await server();
    const kid = await kidOf(t);
    const r = await mint(t, { variant });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");

    const jti = r.json.claims?.jti as string;
    expect(jti).toMatch(UUID);
    const iat = variant === "expired" ? T0S - 3600 - 60 : variant === "not_yet_valid" ? T0S + 300 : T0S;
    const claims = {
      iss: variant === "wrong_issuer" ? "https://not-the-sandbox.test" : ISSUER,
      sub: DEFAULT_MERCHANT_ID,
      aud: variant === "wrong_audience" ? "another-api" : AUDIENCE,
      iat,
      exp: iat + 3600,
      jti,
      ...(variant === "not_yet_valid" ? { nbf: T0S + 300 } : {}),
      // The login's kind carries the login's claims (no client_id: under a profile whose access
      // tokens are typ JWT too, that is what tells it apart).
      ...(variant === "login_token"
        ? { username: "merchant@sandbox.test", roles: ["ROLE_MERCHANT"] }
        : { client_id: DEFAULT_KEY, scope: "payment cashout" }),
    };
    const typ = variant === "login_token" ? "JWT" : "at+jwt";
    const header =
      variant === "alg_none"
        ? { alg: "none", typ, kid }
        : { alg: "RS256", kid: variant === "unknown_kid" ? "kid-not-in-this-sandbox" : variant === "foreign_key" ? expect.any(String) : kid, typ };
    expect(r.json).toEqual({ token: expect.any(String), variant, header, claims, expected_error: EXPECTED_ERROR[variant] });

    // The token is what the answer says it is.
    const token = r.json.token as string;
    expect(token.split(".")).toHaveLength(3);
    expect(decodeProtectedHeader(token)).toEqual(r.json.header);
    expect(decodeJwt(token)).toEqual(r.json.claims);
    if (variant === "alg_none") expect(token.endsWith(".")).toBe(true);
    else expect(token.split(".")[2]).toMatch(/^[A-Za-z0-9_-]{100,}$/);
    if (variant === "foreign_key") expect(r.json.header.kid).not.toBe(kid);

    const answer = await pay(t, token);
    if (EXPECTED_ERROR[variant] === null) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json).toMatchObject({ merchant_id: DEFAULT_MERCHANT_ID, token_id: jti, expires_at: new Date((T0S + 3600) * 1000).toISOString() });
      // The login's kind answers as the login does.
      expect(answer.headers.get("deprecation")).toBe(variant === "login_token" ? "@1735689600" : null);
    } else {
      expectRefusedWith(answer, r.json.expected_error);
    }
  });

  it("mints with no body: a valid token for the primary scenario's first merchant", async () => {
    const t = await server({ scenarios: ["token-endpoint-outage"] });
    const r = await t.call("/__sandbox/tokens", postEmpty());
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      variant: "valid",
      expected_error: null,
      claims: { sub: "m_token_endpoint_outage", client_id: "token-endpoint-outage-key" },
    });
    expect((await pay(t, r.json.token)).status).toBe(200);
  });

  it("takes the merchant by api_key or by id; a session's merchant too, on the session's clock", async () => {
    const t = await server({ scenarios: ["short-lived-tokens"] });
    const byKey = await mint(t, { merchant: DEFAULT_KEY, variant: "valid" });
    expect(byKey.json.claims).toMatchObject({ sub: DEFAULT_MERCHANT_ID, client_id: DEFAULT_KEY, exp: T0S + 3600 });
    const byId = await mint(t, { merchant: DEFAULT_MERCHANT_ID, variant: "expired" });
    expect(byId.json.claims).toMatchObject({ sub: DEFAULT_MERCHANT_ID, exp: T0S - 60 });
    expectRefusedWith(await pay(t, byId.json.token), "token_expired");
    // The scenario's own token TTL (short-lived-tokens: 60 s), and ttl to override it.
    const short = await mint(t, { merchant: "short-lived-tokens-key" });
    expect(short.json.claims.exp - short.json.claims.iat).toBe(60);
    const longer = await mint(t, { merchant: "short-lived-tokens-key", ttl: "90s" });
    expect(longer.json.claims.exp - longer.json.claims.iat).toBe(90);
    // The shortest ttl accepted: one second, and the token works for that second.
    const shortest = await mint(t, { ttl: 1 });
    expect(shortest.json.claims.exp - shortest.json.claims.iat).toBe(1);
    expect((await pay(t, shortest.json.token)).status).toBe(200);

    const session = (await t.call("/__sandbox/sessions", postJson({}))).json;
    await t.call(`/__sandbox/sessions/${session.id}/clock`, postJson({ advance: "2h" }));
    const forSession = await mint(t, { merchant: session.merchant.api_key });
    expect(forSession.status).toBe(201);
    expect(forSession.json.claims).toMatchObject({ sub: session.merchant.id, client_id: session.merchant.api_key, iat: T0S + 7200 });
    const paid = await pay(t, forSession.json.token);
    expect(paid.status).toBe(200);
    expect(paid.json.merchant_id).toBe(session.merchant.id);
    const expiredForSession = await mint(t, { merchant: session.merchant.id, variant: "expired" });
    expect(expiredForSession.json.claims.exp).toBe(T0S + 7200 - 60);
    expectRefusedWith(await pay(t, expiredForSession.json.token), "token_expired");
    // The default merchant's token minted at T0 is still fine: only the session's clock moved.
    expect((await pay(t, byKey.json.token)).status).toBe(200);
  });

  it("every variant keeps its promise under a leeway: the sandbox still refuses it with expected_error", async () => {
    // expected_error is "the code the sandbox answers for this token" (src/control/mint.ts). With
    // --leeway 5m, an 'expired' token that expired 60 s ago, or a 'not_yet_valid' one valid in
    // 300 s, is accepted: the minted times must take the leeway into account.
    const t = await server({ leeway: "5m" });
    const seen: Array<[string, number, string | null]> = [];
    for (const variant of VARIANTS) {
      const minted = (await mint(t, { variant })).json;
      expect(minted.expected_error).toBe(EXPECTED_ERROR[variant]);
      const answer = await pay(t, minted.token);
      seen.push([variant, answer.status, answer.json.code ?? null]);
    }
    expect(seen).toEqual(VARIANTS.map((v) => [v, EXPECTED_ERROR[v] === null ? 200 : 401, EXPECTED_ERROR[v]]));
  });

  it("login_token where the merchant's scenario refuses login tokens: expected_error token_not_access_token, and so it is", async () => {
    const t = await server({ loginToken: "refused" });
    const minted = await mint(t, { variant: "login_token" });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.json.expected_error).toBe("token_not_access_token");
    expectRefusedWith(await pay(t, minted.json.token), "token_not_access_token");
    // The valid kind is still valid there.
    expect((await pay(t, (await mint(t, { variant: "valid" })).json.token)).status).toBe(200);
  });

  it("404 for an unknown merchant", async () => {
    const t = await server();
    expectProblem(
      await mint(t, { merchant: "no-such-key" }),
      problem(
        404,
        "Not Found",
        "not_found",
        "No merchant with api_key or id 'no-such-key'. Use a loaded merchant's api_key (see GET /__sandbox/health and merchant-sandbox scenarios) or a session's.",
        "/__sandbox/tokens",
        "not_found",
      ),
    );
  });

  describe("400 for a bad request", () => {
    const cases: Array<[string, unknown, string, string]> = [
      ["unknown variant", { variant: "sideways" }, "mint_variant_unknown", `variant 'sideways' is not known; use one of: ${VARIANTS.join(", ")}.`],
      ["non-string variant", { variant: 3 }, "mint_field_invalid", '"variant" must be a string.'],
      ["non-string merchant", { merchant: { id: "x" } }, "mint_field_invalid", '"merchant" must be a string.'],
      ["bad ttl", { ttl: "forever" }, "mint_ttl_invalid", 'ttl must be a duration such as "90s", "59m" or "1h".'],
      ["unknown field", { kind: "expired" }, "unknown_field", "POST /__sandbox/tokens does not take 'kind'; it takes 'merchant', 'variant', 'ttl'."],
      [
        "a misspelt variant, with the closest one suggested",
        { variant: "expried" },
        "mint_variant_unknown",
        `variant 'expried' is not known (did you mean 'expired'?); use one of: ${VARIANTS.join(", ")}.`,
      ],
      ...["constructor", "__proto__", "valueOf", "toString", "hasOwnProperty"].map((variant): [string, unknown, string, string] => [
        `regression: variant '${variant}' (a name on every object's prototype) is refused, not minted as a valid token`,
        { variant },
        "mint_variant_unknown",
        `variant '${variant}' is not known; use one of: ${VARIANTS.join(", ")}.`,
      ]),
      ...[0, "0s", "0", "400ms"].map((ttl): [string, unknown, string, string] => [
        `regression: ttl ${JSON.stringify(ttl)} (a "valid" token already expired) is refused, pointing at variant "expired"`,
        { ttl },
        "mint_ttl_invalid",
        `ttl must be at least 1s, got '${ttl}'. For a token that is already expired, use variant "expired".`,
      ]),
    ];
    it.each(cases)("%s", async (_name, body, code, detail) => {
      const t = await server();
      expectProblem(await mint(t, body), problem(400, "Bad Request", code, detail, "/__sandbox/tokens", "invalid_request"));
    });

    it("not JSON / not declared JSON", async () => {
      const t = await server();
      expect((await t.call("/__sandbox/tokens", { method: "POST", headers: { "content-type": "application/json" }, body: "{" })).json.code).toBe(
        "body_malformed_json",
      );
      const r = await t.call("/__sandbox/tokens", { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
      expect(r.status).toBe(415);
      expect(r.json.code).toBe("control_json_required");
    });
  });
});

describe("the admin token", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ adminToken: "s3cret-admin-token" });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(CONTROL_CALLS)("%s %s: 401 admin_token_required without it, and with a wrong one", async (method, path, body) => {
    expectAdminRefusal(await t.call(path, init(method, body)), ADMIN_MISSING, path);
    expectAdminRefusal(await t.call(path, init(method, body, { authorization: "Basic czNjcmV0LWFkbWluLXRva2Vu" })), ADMIN_MISSING, path);
    expectAdminRefusal(await t.call(path, init(method, body, { authorization: "Bearer s3cret-admin-token-not" })), ADMIN_WRONG, path);
    expectAdminRefusal(await t.call(path, init(method, body, { authorization: "Bearer s3cret-admin-toke" })), ADMIN_WRONG, path);
    expectAdminRefusal(await t.call(path, init(method, body, { "x-admin-token": "S3CRET-ADMIN-TOKEN" })), ADMIN_WRONG, path);
    // A right bearer does not make a wrong X-Admin-Token right.
    expectAdminRefusal(
      await t.call(path, init(method, body, { "x-admin-token": "nope", authorization: "Bearer s3cret-admin-token" })),
      ADMIN_WRONG,
      path,
    );
  });

  it("works with Authorization: Bearer <admin token> and with X-Admin-Token", async () => {
    const ways: Array<Record<string, string>> = [
      { authorization: "Bearer s3cret-admin-token" },
      { authorization: "bearer s3cret-admin-token" },
      { "x-admin-token": "s3cret-admin-token" },
    ];
    for (const headers of ways) {
      const clock = await t.call("/__sandbox/clock", { headers });
      expect(clock.status).toBe(200);
      expect(clock.json).toEqual({ now: new Date(T0).toISOString(), frozen: true });
      const session = await t.call("/__sandbox/sessions", postJson({}, headers));
      expect(session.status).toBe(201);
      expect((await t.call(`/__sandbox/sessions/${session.json.id}`, { headers })).status).toBe(200);
      const minted = await t.call("/__sandbox/tokens", postJson({ variant: "expired" }, headers));
      expect(minted.status).toBe(201);
      expectRefusedWith(await pay(t, minted.json.token), "token_expired");
      expect((await t.call("/__sandbox/requests", { headers })).status).toBe(200);
      expect((await t.call(`/__sandbox/sessions/${session.json.id}`, { method: "DELETE", headers })).status).toBe(204);
      const reset = await t.call("/__sandbox/reset", postEmpty(headers));
      expect(reset.status).toBe(200);
      expect(reset.json.reset).toBe(true);
    }
  });

  it("leaves health open", async () => {
    const r = await t.call("/__sandbox/health");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: "ok", version: expect.stringMatching(/^\d+\.\d+\.\d+$/), scenarios: ["default"] });
    expect((await t.call("/__sandbox/health", { headers: { authorization: "Bearer wrong" } })).status).toBe(200);
  });

  it("leaves the merchant API unaffected", async () => {
    const token = await t.token();
    expect((await pay(t, token)).status).toBe(200);
    expect((await t.call("/api/v2/cashout/payouts", { method: "POST", headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await t.call("/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` } })).status).toBe(
      201,
    );
    expect((await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }))).status).toBe(200);
    expect((await t.call("/.well-known/jwks.json")).status).toBe(200);
    // The admin token is no access token.
    expectRefusedWith(await pay(t, "s3cret-admin-token"), "token_malformed");
    // And the merchant API's requests are journaled as usual.
    const journal = await t.call("/__sandbox/requests?limit=1", { headers: { "x-admin-token": "s3cret-admin-token" } });
    expect(journal.json.requests).toEqual([expect.objectContaining({ path: "/api/v2/payment/x", code: "token_malformed" })]);
  });
});

describe("controlPlane: false", () => {
  it("answers 404 with the exact message on every /__sandbox/ path but health", async () => {
    const t = await server({ controlPlane: false });
    for (const [method, path, body] of [
      ...CONTROL_CALLS,
      ["GET", "/__sandbox/anything"] as [string, string],
      ["GET", "/__sandbox/"] as [string, string],
    ]) {
      expectProblem(await t.call(path, init(method, body)), planeOff(path));
    }
    const health = await t.call("/__sandbox/health");
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: "ok", version: expect.stringMatching(/^\d+\.\d+\.\d+$/), scenarios: ["default"] });
    // The merchant API works as ever.
    const token = await t.token();
    expect((await pay(t, token)).status).toBe(200);
    // Nothing was changed by the refused calls: the clock is still at T0 (the POST clock was refused).
    expect(decodeJwt(await t.token()).iat).toBe(T0S);
  });

  it("wins over the admin token: 404, not 401", async () => {
    const t = await server({ controlPlane: false, adminToken: "s3cret-admin-token" });
    expectProblem(await t.call("/__sandbox/clock"), planeOff("/__sandbox/clock"));
    expectProblem(await t.call("/__sandbox/clock", { headers: { "x-admin-token": "s3cret-admin-token" } }), planeOff("/__sandbox/clock"));
    expect((await t.call("/__sandbox/health")).status).toBe(200);
  });
});

describe("through the CLI", () => {
  const running: Array<CliProcess & { url: string }> = [];
  afterAll(() => {
    for (const cli of running) cli.child.kill("SIGKILL");
  });
  async function cli(args: string[], env: Record<string, string> = {}) {
    const c = await startCliServer(args, env);
    running.push(c);
    const call = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(c.url + path, init);
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined } as Reply;
    };
    return { c, call };
  }
  const tokenRequest = postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET });

  it("--admin-token guards the control plane, never prints the token, and leaves health and the API open", async () => {
    const { c, call } = await cli(["--admin-token", "x1-admin-token-16"]);
    expectAdminRefusal(await call("/__sandbox/clock"), ADMIN_MISSING, "/__sandbox/clock");
    expectAdminRefusal(await call("/__sandbox/sessions", postJson({})), ADMIN_MISSING, "/__sandbox/sessions");
    expectAdminRefusal(await call("/__sandbox/clock", { headers: { authorization: "Bearer x2-admin-token-16" } }), ADMIN_WRONG, "/__sandbox/clock");
    const viaBearer = await call("/__sandbox/clock", { headers: { authorization: "Bearer x1-admin-token-16" } });
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.json).toEqual({ now: expect.any(String), frozen: false });
    const session = await call("/__sandbox/sessions", postJson({}, { "x-admin-token": "x1-admin-token-16" }));
    expect(session.status).toBe(201);
    expect((await call("/__sandbox/health")).status).toBe(200);
    const token = await call("/api/v2/auth/token", tokenRequest);
    expect(token.status).toBe(200);
    expect((await call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token.json.access_token}` } })).status).toBe(200);
    await new Promise((r) => setImmediate(r));
    expect(c.stdout() + c.stderr()).not.toContain("x1-admin-token-16");
  });

  it("MERCHANT_SANDBOX_ADMIN_TOKEN sets the admin token too", async () => {
    const { call } = await cli([], { MERCHANT_SANDBOX_ADMIN_TOKEN: "env-admin-token-16" });
    expectAdminRefusal(await call("/__sandbox/requests"), ADMIN_MISSING, "/__sandbox/requests");
    expectAdminRefusal(await call("/__sandbox/requests", { headers: { "x-admin-token": "x1-admin-token-16" } }), ADMIN_WRONG, "/__sandbox/requests");
    const ok = await call("/__sandbox/requests", { headers: { "x-admin-token": "env-admin-token-16" } });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ requests: [], capacity: 1000 });
    expect((await call("/__sandbox/health")).status).toBe(200);
  });

  it("--no-control-plane leaves only health", async () => {
    const { call } = await cli(["--no-control-plane"]);
    expectProblem(await call("/__sandbox/sessions", postJson({})), planeOff("/__sandbox/sessions"));
    expectProblem(await call("/__sandbox/clock"), planeOff("/__sandbox/clock"));
    expectProblem(await call("/__sandbox/tokens", postJson({ variant: "valid" })), planeOff("/__sandbox/tokens"));
    expect((await call("/__sandbox/health")).status).toBe(200);
    expect((await call("/api/v2/auth/token", tokenRequest)).status).toBe(200);
  });

  it("MERCHANT_SANDBOX_CONTROL_PLANE=false does the same", async () => {
    const { call } = await cli([], { MERCHANT_SANDBOX_CONTROL_PLANE: "false" });
    expectProblem(await call("/__sandbox/requests"), planeOff("/__sandbox/requests"));
    expect((await call("/__sandbox/health")).status).toBe(200);
  });

  it("--max-sessions and --journal-size bound the control plane", async () => {
    const { call } = await cli(["--max-sessions", "1", "--journal-size", "2"]);
    expect((await call("/__sandbox/sessions", postJson({}))).status).toBe(201);
    const second = await call("/__sandbox/sessions", postJson({}));
    expect(second.status).toBe(429);
    expect(second.json.code).toBe("too_many_sessions");
    for (let i = 0; i < 3; i++) await call(`/api/v2/payment/call-${i}`);
    const journal = await call("/__sandbox/requests");
    expect(journal.json.capacity).toBe(2);
    expect(journal.json.requests.map((e: { path: string }) => e.path)).toEqual(["/api/v2/payment/call-1", "/api/v2/payment/call-2"]);
  });
});
