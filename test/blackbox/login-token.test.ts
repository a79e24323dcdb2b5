import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScenarioFile } from "../../src/scenarios/schema.js";
import { startCliServer, type CliProcess } from "../support/cli.js";
import { expectProblem, RENEW_HINT } from "../support/expect.js";
import { DEFAULT_MERCHANT_ID, T0, postJson, problem, serversPerTest, type Reply, type TestServer } from "../support/server.js";

/**
 * The deprecated login's token (typ JWT) on payment and cashout: accepted by default, as the
 * provider's Symfony API accepts a LexikJWT token on its other firewalled routes, with the login's
 * Deprecation/Sunset/Link on the answer and every check of an access token (time, revocation, keys,
 * scope); refused as `token_not_access_token` with the `loginToken` setting at `refused` (library
 * option, CLI flag, environment variable, scenario setting); flagged by the report either way.
 */

const LOGIN = "/api/login_check";
const PAYMENT = "/api/v2/payment/orders/42";
const CASHOUT = "/api/v2/cashout/transfers";
const T0S = T0 / 1000;
const DEPRECATION = {
  deprecation: "@1735689600",
  sunset: "Wed, 30 Jun 2027 23:59:59 GMT",
  link: '</api/v2/auth/token>; rel="successor-version"',
};
const NOTE = "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.";
const REFUSED =
  "This token comes from the deprecated POST /api/login_check; payment and cashout endpoints accept only access tokens. Exchange api_key and api_secret at POST /api/v2/auth/token and send that access_token.";

const start = serversPerTest();

async function loginToken(t: TestServer, username = "merchant@sandbox.test", password = "sandbox-password"): Promise<string> {
  const r = await t.call(LOGIN, postJson({ username, password }));
  expect(r.status, r.text).toBe(200);
  return r.json.token as string;
}

function call(t: TestServer, path: string, token: string, method = "GET"): Promise<Reply> {
  return t.call(path, { method, headers: { authorization: `Bearer ${token}` } });
}

/** The placeholder of an authenticated call, exactly, with the login's three headers. */
function expectAcceptedAsLogin(r: Reply, token: string, operation: string, scope: "payment" | "cashout", merchant = DEFAULT_MERCHANT_ID): void {
  const claims = decodeJwt(token);
  expect({ status: r.status, json: r.json }, r.text).toEqual({
    status: 200,
    json: {
      sandbox: true,
      merchant_id: merchant,
      operation,
      scope,
      token_id: claims.jti,
      expires_at: new Date((claims.exp as number) * 1000).toISOString(),
      note: NOTE,
    },
  });
  expect(r.headers.get("content-type")).toBe("application/json");
  expect(r.headers.get("cache-control")).toBe("no-store");
  for (const [name, value] of Object.entries(DEPRECATION)) expect(r.headers.get(name), name).toBe(value);
}

function expectRefusedAsNotAccessToken(r: Reply, path: string): void {
  expectProblem(r, problem(401, "Unauthorized", "token_not_access_token", REFUSED, path, "invalid_token"), {
    headers: { deprecation: null, sunset: null, link: null },
  });
}

describe("the login's token, accepted (the default)", () => {
  it("works on payment (GET) and cashout (POST), each answer with Deprecation, Sunset and Link; an access token's answer has none", async () => {
    const t = await start();
    const token = await loginToken(t); // req_1
    expectAcceptedAsLogin(await call(t, PAYMENT, token), token, `GET ${PAYMENT}`, "payment"); // req_2
    expectAcceptedAsLogin(await call(t, CASHOUT, token, "POST"), token, `POST ${CASHOUT}`, "cashout"); // req_3
    const access = await call(t, PAYMENT, await t.token()); // req_4, req_5
    expect(access.status).toBe(200);
    for (const name of Object.keys(DEPRECATION)) expect(access.headers.get(name), name).toBeNull();
    // The journal marks the calls the login's token made, and only those.
    const journal = t.sandbox.journal.list();
    // The login and the exchange issued a token each: its id and expiry (an hour on the frozen clock), for the QA page's timeline.
    expect(journal.map((e) => [e.id, e.endpoint, e.status, e.loginToken, e.tokenId, e.tokenExpiresAt])).toEqual([
      ["req_1", "login", 200, undefined, decodeJwt(token).jti, "2026-01-01T01:00:00.000Z"],
      ["req_2", "payment", 200, true, decodeJwt(token).jti, undefined],
      ["req_3", "cashout", 200, true, decodeJwt(token).jti, undefined],
      ["req_4", "token", 200, undefined, expect.any(String), "2026-01-01T01:00:00.000Z"],
      ["req_5", "payment", 200, undefined, journal[3]!.tokenId, undefined],
    ]);
  });

  it("the report's deprecated_login_used cites the login and the calls made with its token", async () => {
    const t = await start();
    const token = await loginToken(t); // req_1
    await call(t, PAYMENT, token); // req_2
    await call(t, CASHOUT, token, "DELETE"); // req_3
    const report = await t.call(`/__sandbox/report?merchant=${DEFAULT_MERCHANT_ID}`);
    expect(report.status).toBe(200);
    expect(report.json.findings).toEqual([
      {
        code: "deprecated_login_used",
        severity: "warning",
        message: `Merchant '${DEFAULT_MERCHANT_ID}' used the deprecated POST /api/login_check (1 request) and sent its token to payment or cashout endpoints (2 requests). It will be switched off (see its Deprecation and Sunset headers): exchange api_key and api_secret at POST /api/v2/auth/token and send that access token instead.`,
        evidence: ["req_1", "req_2", "req_3"],
      },
    ]);
  });

  it("expires as an access token does, on the sandbox clock", async () => {
    const t = await start();
    const token = await loginToken(t);
    t.sandbox.clock.advance(3600_000);
    expectProblem(
      await call(t, PAYMENT, token),
      problem(
        401,
        "Unauthorized",
        "token_expired",
        `The access token expired at ${new Date((T0S + 3600) * 1000).toISOString()} (sandbox time is now ${new Date((T0S + 3600) * 1000).toISOString()}). Renew it before it expires: ${RENEW_HINT}`,
        PAYMENT,
        "invalid_token",
      ),
    );
  });

  it("is revoked as an access token is: a scenario's revoke_token: all on the 2nd call, and a reset; a login after that works", async () => {
    const t = await start({ scenarios: ["token-revoked-mid-session"] });
    const email = "token-revoked-mid-session@sandbox.test";
    const password = "token-revoked-mid-session-password";
    const first = await loginToken(t, email, password);
    expectAcceptedAsLogin(await call(t, PAYMENT, first), first, `GET ${PAYMENT}`, "payment", "m_token_revoked_mid_session");
    const revoked = await call(t, PAYMENT, first);
    expectProblem(revoked, problem(401, "Unauthorized", "token_revoked", `The access token was revoked. ${RENEW_HINT}`, PAYMENT, "invalid_token"));
    expect(revoked.headers.get("x-sandbox-rule")).toBe("token-revoked-mid-session/revoke-on-second-call");
    // Issued after the revocation, on the same frozen second: counted by issue order, so it works.
    const second = await loginToken(t, email, password);
    expectAcceptedAsLogin(await call(t, PAYMENT, second), second, `GET ${PAYMENT}`, "payment", "m_token_revoked_mid_session");
    // A reset revokes every token issued before it, the login's too.
    const own = await loginToken(t);
    expect((await t.call("/__sandbox/reset", postJson({}))).status).toBe(200);
    expect((await call(t, PAYMENT, own)).json.code).toBe("token_revoked");
  });

  it("has its merchant's rights: a payment-only merchant's login token gets 403 insufficient_scope on cashout", async () => {
    const t = await start({ scenarios: ["cashout-without-scope"] });
    const token = await loginToken(t, "cashout-without-scope@sandbox.test", "cashout-without-scope-password");
    expectAcceptedAsLogin(await call(t, PAYMENT, token), token, `GET ${PAYMENT}`, "payment", "m_cashout_without_scope");
    const r = await call(t, CASHOUT, token);
    expect([r.status, r.json.code, r.headers.get("www-authenticate")]).toEqual([
      403,
      "insufficient_scope",
      expect.stringMatching(/^Bearer realm="merchant-api", error="insufficient_scope", error_description="[^"]+", scope="cashout"$/),
    ]);
  });

  it("a signing key rotated away refuses it as it refuses access tokens (token_unknown_kid)", async () => {
    const t = await start();
    const token = await loginToken(t);
    await t.sandbox.keys.rotate(false);
    expect((await call(t, PAYMENT, token)).json.code).toBe("token_unknown_kid");
  });

  it("--login-mode gone still answers the login 410 (the setting is about the token, not the login)", async () => {
    const t = await start({ loginMode: "gone", loginToken: "accepted" });
    const r = await t.call(LOGIN, postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
    expect([r.status, r.json.code, r.headers.get("deprecation")]).toEqual([410, "login_gone", DEPRECATION.deprecation]);
  });
});

describe("the login's token, refused", () => {
  it("library option loginToken: 'refused': 401 token_not_access_token on payment and cashout, no deprecation headers; the report still flags it", async () => {
    const t = await start({ loginToken: "refused" });
    const token = await loginToken(t); // req_1
    expectRefusedAsNotAccessToken(await call(t, PAYMENT, token), PAYMENT); // req_2
    expectRefusedAsNotAccessToken(await call(t, CASHOUT, token, "POST"), CASHOUT); // req_3
    expect(t.sandbox.journal.list().map((e) => [e.id, e.code, e.loginToken])).toEqual([
      ["req_1", undefined, undefined],
      ["req_2", "token_not_access_token", true],
      ["req_3", "token_not_access_token", true],
    ]);
    expect(t.sandbox.report({ merchant: DEFAULT_MERCHANT_ID }).map((f) => [f.code, f.evidence])).toEqual([
      ["deprecated_login_used", ["req_1", "req_2", "req_3"]],
    ]);
  });

  it("scenario setting login_token: refused applies to that scenario's merchants only", async () => {
    const strict: ScenarioFile = {
      name: "strict-login-token",
      description: "login tokens refused",
      merchants: [
        {
          id: "m_strict",
          api_key: "strict-key",
          api_secret: "strict-secret",
          payment_token: "strict-payment-token",
          login: { email: "strict@sandbox.test", password: "strict-password" },
        },
      ],
      settings: { login_token: "refused" },
    };
    const t = await start({ scenarios: [strict] });
    expectRefusedAsNotAccessToken(await call(t, PAYMENT, await loginToken(t, "strict@sandbox.test", "strict-password")), PAYMENT);
    const defaults = await loginToken(t);
    expectAcceptedAsLogin(await call(t, PAYMENT, defaults), defaults, `GET ${PAYMENT}`, "payment");
  });

  it("a session of that scenario refuses it too, and the session's report flags it", async () => {
    const t = await start({ scenarios: [{ ...strictScenario(), name: "strict-sessions" }] });
    const created = await t.call("/__sandbox/sessions", postJson({ scenario: "strict-sessions" }));
    expect(created.status, created.text).toBe(201);
    const { id, merchant } = created.json;
    const token = await loginToken(t, merchant.login.email, merchant.login.password);
    expect((await call(t, PAYMENT, token)).json.code).toBe("token_not_access_token");
    const report = await t.call(`/__sandbox/sessions/${id}/report`);
    expect(report.json.findings.map((f: { code: string; evidence: string[] }) => [f.code, f.evidence.length])).toEqual([
      ["deprecated_login_used", 2],
    ]);
  });
});

function strictScenario(): ScenarioFile {
  return {
    name: "strict",
    description: "login tokens refused",
    merchants: [{ id: "m_strict_s", api_key: "strict-s-key", api_secret: "strict-s-secret", payment_token: "strict-s-payment-token" }],
    settings: { login_token: "refused" },
  };
}

describe("the CLI: --login-token and MERCHANT_SANDBOX_LOGIN_TOKEN", () => {
  let clis: Array<CliProcess & { url: string }> = [];
  beforeAll(async () => {
    clis = await Promise.all([
      startCliServer(["--login-token", "refused"]),
      startCliServer([], { MERCHANT_SANDBOX_LOGIN_TOKEN: "refused" }),
      startCliServer(),
    ]);
  });
  afterAll(() => {
    for (const c of clis) c.child.kill("SIGKILL");
  });
  const flag = () => clis[0]!.url;
  const env = () => clis[1]!.url;
  const byDefault = () => clis[2]!.url;

  async function paymentWithLoginToken(url: string): Promise<Response> {
    const login = await fetch(url + LOGIN, postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
    const token = ((await login.json()) as { token: string }).token;
    return fetch(url + PAYMENT, { headers: { authorization: `Bearer ${token}` } });
  }

  it.each([
    ["--login-token refused", flag],
    ["MERCHANT_SANDBOX_LOGIN_TOKEN=refused", env],
  ])("%s: 401 token_not_access_token", async (_how, url) => {
    const r = await paymentWithLoginToken(url());
    expect(r.status).toBe(401);
    expect(((await r.json()) as { code: string }).code).toBe("token_not_access_token");
  });

  it("no flag: accepted, with the Deprecation header", async () => {
    const r = await paymentWithLoginToken(byDefault());
    expect([r.status, r.headers.get("deprecation")]).toEqual([200, DEPRECATION.deprecation]);
  });
});
