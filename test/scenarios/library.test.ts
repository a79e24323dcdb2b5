import { readFileSync } from "node:fs";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWK } from "jose";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_KEY,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  T0,
  postJson,
  problem,
  serversPerTest,
  type Reply,
  type TestServer,
} from "../support/server.js";
import { AUDIENCE, ISSUER, REALM, RENEW_HINT, bearer, challenge, expectProblem } from "../support/expect.js";
import { LIBRARY } from "../support/library.js";

/**
 * The scenario library (scenarios/*.yaml), played end to end over real HTTP against the real
 * node:http server, one describe per file. Each test uses the scenario's own merchant credentials
 * (the credentials select the scenario), follows the call counts the yaml scripts, and asserts
 * every step: exact status, the relevant headers (Retry-After, X-Sandbox-Rule, WWW-Authenticate)
 * and the exact body. Each also checks that the built-in default merchant, loaded beside the
 * scenario, is not touched by the scenario's rules. The sandbox clock is frozen at T0 and moved,
 * never slept on.
 */

const TOKEN_PATH = "/api/v2/auth/token";
const INIT_PATH = "/api/v2/payment/init";
const LOGIN_PATH = "/api/login_check";
const JWKS_PATH = "/.well-known/jwks.json";
const API_KEY_CHALLENGE = `ApiKey realm="${REALM}", error="invalid_client"`;
const NOTE = "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.";
const INIT_NOTE = "Hosted checkout is not simulated beyond this answer; the URL is a sandbox placeholder.";
const T0_SECONDS = T0 / 1000;
const DEPRECATION = {
  deprecation: "@1735689600",
  sunset: "Wed, 30 Jun 2027 23:59:59 GMT",
  link: '</api/v2/auth/token>; rel="successor-version"',
};

type LibraryName = (typeof LIBRARY)[number];

interface Creds {
  id: string;
  key: string;
  secret: string;
  paymentToken: string;
  email: string;
  password: string;
}

/** The merchant of each library file, copied from the yaml (checked against the files below). */
function creds(name: LibraryName): Creds {
  if (name === "default") {
    return {
      id: DEFAULT_MERCHANT_ID,
      key: DEFAULT_KEY,
      secret: DEFAULT_SECRET,
      paymentToken: DEFAULT_PAYMENT_TOKEN,
      email: "merchant@sandbox.test",
      password: "sandbox-password",
    };
  }
  return {
    id: `m_${name.replaceAll("-", "_")}`,
    key: `${name}-key`,
    secret: `${name}-secret`,
    paymentToken: `${name}-payment-token`,
    email: `${name}@sandbox.test`,
    password: `${name}-password`,
  };
}
const DEFAULT = creds("default");

// ---------------------------------------------------------------------------------------------
// helpers

const start = serversPerTest();

function exchange(t: TestServer, c: Pick<Creds, "key" | "secret">): Promise<Reply> {
  return t.call(TOKEN_PATH, postJson({ api_key: c.key, api_secret: c.secret }));
}

function init(paymentToken: string): RequestInit {
  return postJson({ amount: 1999, currency: "EUR" }, { authorization: `Bearer ${paymentToken}` });
}

function rule(scenario: LibraryName, name: string): string {
  return `${scenario}/${name}`;
}

/** A 200 token answer, exactly; returns the access token. */
function expectToken(r: Reply, expiresIn = 3600, ruleHeader: string | null = null): string {
  expect(r.status, r.text).toBe(200);
  expect(r.json).toEqual({ access_token: expect.any(String), token_type: "Bearer", expires_in: expiresIn });
  expect(Object.keys(r.json)).toEqual(["access_token", "token_type", "expires_in"]);
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.headers.get("pragma")).toBe("no-cache");
  expect(r.headers.get("x-sandbox-rule")).toBe(ruleHeader);
  return r.json.access_token as string;
}

/** A 200 placeholder answer of a protected group, exactly. */
function expectAuthenticated(r: Reply, token: string, merchantId: string, method: string, path: string, ruleHeader: string | null = null): void {
  const claims = decodeJwt(token);
  const scope = path.startsWith("/api/v2/cashout") ? "cashout" : "payment";
  expect(r.status, r.text).toBe(200);
  expect(r.json).toEqual({
    sandbox: true,
    merchant_id: merchantId,
    operation: `${method} ${path}`,
    scope,
    token_id: claims.jti,
    expires_at: new Date(claims.exp! * 1000).toISOString(),
    note: NOTE,
  });
  expect(r.headers.get("www-authenticate")).toBeNull();
  expect(r.headers.get("x-sandbox-rule")).toBe(ruleHeader);
}

/** A 201 payment/init answer, exactly (the generated payment id by its shape). */
function expectPaymentCreated(r: Reply, merchantId: string, createdAtMs: number, ruleHeader: string | null = null): void {
  expect(r.status, r.text).toBe(201);
  const id = r.json.payment_id as string;
  expect(id).toMatch(/^pay_[a-z0-9]{24}$/);
  expect(r.json).toEqual({
    payment_id: id,
    checkout_url: `https://checkout.sandbox.test/pay/${id}`,
    merchant_id: merchantId,
    status: "created",
    created_at: new Date(createdAtMs).toISOString(),
    expires_at: new Date(createdAtMs + 30 * 60_000).toISOString(),
    amount: 1999,
    currency: "EUR",
    note: INIT_NOTE,
  });
  expect(r.headers.get("location")).toBe(`/api/v2/payment/${id}`);
  expect(r.headers.get("x-sandbox-rule")).toBe(ruleHeader);
}

/** An exact problem+json answer with its headers (WWW-Authenticate, X-Sandbox-Rule and Retry-After: absent unless given). */
function expectRefusal(
  r: Reply,
  expected: {
    status: number;
    title: string;
    code: string;
    detail: string;
    path: string;
    error?: string;
    wwwAuthenticate?: string | null;
    rule?: string | null;
    retryAfter?: string | null;
  },
): void {
  expectProblem(r, problem(expected.status, expected.title, expected.code, expected.detail, expected.path, expected.error), {
    headers: {
      "www-authenticate": expected.wwwAuthenticate ?? null,
      "x-sandbox-rule": expected.rule ?? null,
      "retry-after": expected.retryAfter ?? null,
    },
  });
}

function invalidToken(r: Reply, code: string, detail: string, path: string, ruleHeader: string | null = null): void {
  expectRefusal(r, {
    status: 401,
    title: "Unauthorized",
    code,
    detail,
    path,
    error: "invalid_token",
    wwwAuthenticate: challenge("invalid_token", detail),
    rule: ruleHeader,
  });
}

const expiredMessage = (expSeconds: number, nowSeconds: number) =>
  `The access token expired at ${iso(expSeconds)} (sandbox time is now ${iso(nowSeconds)}). Renew it before it expires: ${RENEW_HINT}`;
const expiredEarlyMessage = (atSeconds: number, expSeconds: number, nowSeconds: number) =>
  `The access token was expired early by the sandbox at ${iso(atSeconds)}, before its exp ${iso(expSeconds)} (sandbox time is now ${iso(nowSeconds)}). A client must handle a 401 by getting a new token: ${RENEW_HINT}`;
const unknownKidMessage = (kid: string) =>
  `The token's signing key (kid '${kid}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`;
const simulated = (status: string, scenario: string, ruleName: string, retryAfter: number) =>
  `${status}: simulated by scenario '${scenario}', rule '${ruleName}'. Retry after ${retryAfter} seconds, as the Retry-After header says.`;

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/**
 * The default merchant, loaded beside every scenario, works exactly as without any scenario:
 * exchange, payment, cashout, payment/init and the deprecated login, none shaped by a rule.
 */
async function expectDefaultMerchantUnaffected(t: TestServer, nowMs = T0): Promise<void> {
  const token = expectToken(await exchange(t, DEFAULT));
  const claims = decodeJwt(token);
  expect(claims.sub).toBe(DEFAULT_MERCHANT_ID);
  expect(claims.iat).toBe(Math.floor(nowMs / 1000));
  expect(claims.exp).toBe(Math.floor(nowMs / 1000) + 3600);
  expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, DEFAULT_MERCHANT_ID, "GET", "/api/v2/payment/status");
  expectAuthenticated(
    await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })),
    token,
    DEFAULT_MERCHANT_ID,
    "POST",
    "/api/v2/cashout/payout",
  );
  expectPaymentCreated(await t.call(INIT_PATH, init(DEFAULT_PAYMENT_TOKEN)), DEFAULT_MERCHANT_ID, nowMs);
  const login = await t.call(LOGIN_PATH, postJson({ username: DEFAULT.email, password: DEFAULT.password }));
  expect(login.status, login.text).toBe(200);
  expect(login.json).toEqual({ token: expect.stringMatching(/^eyJ/) });
  expect(login.headers.get("x-sandbox-rule")).toBeNull();
  expect(login.headers.get("deprecation")).toBe(DEPRECATION.deprecation);
}

async function jwksKids(t: TestServer): Promise<string[]> {
  const r = await t.call(JWKS_PATH);
  expect(r.status).toBe(200);
  return (r.json.keys as JWK[]).map((k) => k.kid!);
}

// ---------------------------------------------------------------------------------------------

describe("the library files", () => {
  it("holds exactly these 17 scenarios, each with the merchant this suite uses", async () => {
    const { libraryNames } = await import("../../src/scenarios/library.js");
    expect(libraryNames()).toEqual([...LIBRARY].sort());
    for (const name of LIBRARY) {
      const file = parseYaml(readFileSync(new URL(`../../scenarios/${name}.yaml`, import.meta.url), "utf8"));
      expect(file.name).toBe(name);
      expect(file.merchants).toHaveLength(1);
      const m = file.merchants[0];
      const c = creds(name);
      expect({
        id: m.id,
        key: m.api_key,
        secret: m.api_secret,
        paymentToken: m.payment_token,
        email: m.login.email,
        password: m.login.password,
      }).toEqual(c);
    }
  });
});

describe("default", () => {
  it("the happy path: exchange, payment, cashout, payment/init, login; no rule shapes anything", async () => {
    const t = await start({ scenarios: ["default"] });
    const health = await t.call("/__sandbox/health");
    expect(health.json).toEqual({ status: "ok", version: t.sandbox.version, scenarios: ["default"] });

    const token = expectToken(await exchange(t, DEFAULT));
    expect(decodeProtectedHeader(token)).toEqual({ alg: "RS256", kid: expect.any(String), typ: "at+jwt" });
    expect(decodeJwt(token)).toEqual({
      iss: ISSUER,
      sub: DEFAULT_MERCHANT_ID,
      aud: AUDIENCE,
      iat: T0_SECONDS,
      exp: T0_SECONDS + 3600,
      jti: expect.any(String),
      client_id: DEFAULT_KEY,
      scope: "payment cashout",
    });
    for (let i = 0; i < 5; i++) {
      expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, DEFAULT_MERCHANT_ID, "GET", "/api/v2/payment/status");
      expectAuthenticated(
        await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })),
        token,
        DEFAULT_MERCHANT_ID,
        "POST",
        "/api/v2/cashout/payout",
      );
    }
    // One hour later, to the second, the token has expired (default TTL 3600 s, leeway 0).
    t.sandbox.clock.advance(3599_000);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, DEFAULT_MERCHANT_ID, "GET", "/api/v2/payment/status");
    t.sandbox.clock.advance(1_000);
    invalidToken(
      await t.call("/api/v2/payment/status", bearer(token)),
      "token_expired",
      expiredMessage(T0_SECONDS + 3600, T0_SECONDS + 3600),
      "/api/v2/payment/status",
    );
    await expectDefaultMerchantUnaffected(t, T0 + 3600_000);
  });
});

describe("short-lived-tokens", () => {
  const NAME = "short-lived-tokens";
  const M = creds(NAME);

  it("tokens live 60 s: 59 s later the token works, at 60 s it is token_expired; a new token works", async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M), 60);
    const claims = decodeJwt(token);
    expect(claims.sub).toBe(M.id);
    expect(claims.iat).toBe(T0_SECONDS);
    expect(claims.exp).toBe(T0_SECONDS + 60);
    const defaultToken = expectToken(await exchange(t, DEFAULT), 3600);

    t.sandbox.clock.advance(59_000);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })), token, M.id, "POST", "/api/v2/cashout/payout");

    t.sandbox.clock.advance(1_000);
    const now = T0_SECONDS + 60;
    invalidToken(
      await t.call("/api/v2/payment/status", bearer(token)),
      "token_expired",
      expiredMessage(T0_SECONDS + 60, now),
      "/api/v2/payment/status",
    );
    invalidToken(
      await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })),
      "token_expired",
      expiredMessage(T0_SECONDS + 60, now),
      "/api/v2/cashout/payout",
    );

    // Renewing works, and the new token again lives 60 s from now.
    const renewed = expectToken(await exchange(t, M), 60);
    expect(decodeJwt(renewed).exp).toBe(now + 60);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(renewed)), renewed, M.id, "GET", "/api/v2/payment/status");

    // Isolation: the default merchant's one-hour token, issued at T0, still works at T0 + 60 s.
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    await expectDefaultMerchantUnaffected(t, T0 + 60_000);
  });
});

describe("token-expires-after-calls", () => {
  const NAME = "token-expires-after-calls";
  const M = creds(NAME);
  const RULE = rule(NAME, "expire-on-fourth-call");

  it("three payment/cashout calls work, the 4th gets 401 token_expired (expired early); a new token works", async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M));
    const defaultToken = expectToken(await exchange(t, DEFAULT));

    // The default merchant's calls do not count toward the scenario's 4th call.
    for (let i = 0; i < 5; i++) {
      expectAuthenticated(
        await t.call("/api/v2/payment/status", bearer(defaultToken)),
        defaultToken,
        DEFAULT_MERCHANT_ID,
        "GET",
        "/api/v2/payment/status",
      );
    }

    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })), token, M.id, "POST", "/api/v2/cashout/payout");
    expectAuthenticated(await t.call("/api/v2/payment/refund", bearer(token, { method: "POST" })), token, M.id, "POST", "/api/v2/payment/refund");

    const fourth = await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" }));
    invalidToken(fourth, "token_expired", expiredEarlyMessage(T0_SECONDS, T0_SECONDS + 3600, T0_SECONDS), "/api/v2/cashout/payout", RULE);

    // The expired token stays expired (no rule fires any more), a new one works from then on.
    invalidToken(
      await t.call("/api/v2/payment/status", bearer(token)),
      "token_expired",
      expiredEarlyMessage(T0_SECONDS, T0_SECONDS + 3600, T0_SECONDS),
      "/api/v2/payment/status",
    );
    const renewed = expectToken(await exchange(t, M));
    for (let i = 0; i < 4; i++) {
      expectAuthenticated(await t.call("/api/v2/payment/status", bearer(renewed)), renewed, M.id, "GET", "/api/v2/payment/status");
    }

    // Isolation: only the presented token of the scenario's merchant was expired.
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("token-revoked-mid-session", () => {
  const NAME = "token-revoked-mid-session";
  const M = creds(NAME);
  const RULE = rule(NAME, "revoke-on-second-call");
  const REVOKED = `The access token was revoked. ${RENEW_HINT}`;

  it("the 2nd payment/cashout call revokes every token the merchant holds (401 token_revoked); new tokens work", async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M));
    const spare = expectToken(await exchange(t, M));
    const defaultToken = expectToken(await exchange(t, DEFAULT));
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );

    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    invalidToken(await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })), "token_revoked", REVOKED, "/api/v2/cashout/payout", RULE);

    // Every token it held is revoked, not only the presented one.
    invalidToken(await t.call("/api/v2/payment/status", bearer(token)), "token_revoked", REVOKED, "/api/v2/payment/status");
    invalidToken(await t.call("/api/v2/payment/status", bearer(spare)), "token_revoked", REVOKED, "/api/v2/payment/status");

    // A token issued after the revocation works (same second on the frozen clock).
    const renewed = expectToken(await exchange(t, M));
    expect(decodeJwt(renewed).iat).toBe(T0_SECONDS);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(renewed)), renewed, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(renewed, { method: "POST" })), renewed, M.id, "POST", "/api/v2/cashout/payout");

    // Isolation: the default merchant's token was not revoked.
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("secret-rotated", () => {
  const NAME = "secret-rotated";
  const M = creds(NAME);
  const RULE = rule(NAME, "rotate-after-first-exchange");
  const NEW_SECRET = "secret-rotated-new-secret";
  const WRONG = "The api_secret does not match the api_key 'secret-rotated-key'. Check that the secret belongs to this key and was not rotated.";

  it("the 1st exchange works; from the 2nd on the old secret gets 401 wrong_api_secret and the new one works", async () => {
    const t = await start({ scenarios: [NAME] });
    // The default merchant's exchanges do not count as the scenario's.
    expectToken(await exchange(t, DEFAULT));
    expectToken(await exchange(t, DEFAULT));

    const first = expectToken(await exchange(t, M));
    const second = await exchange(t, M);
    expectRefusal(second, {
      status: 401,
      title: "Unauthorized",
      code: "wrong_api_secret",
      detail: WRONG,
      path: TOKEN_PATH,
      error: "invalid_client",
      wwwAuthenticate: API_KEY_CHALLENGE,
      rule: RULE,
    });
    // No secret, old or new, in the refusal.
    expect(second.text).not.toContain(M.secret);
    expect(second.text).not.toContain(NEW_SECRET);

    const third = expectToken(await exchange(t, { key: M.key, secret: NEW_SECRET }), 3600, RULE);
    expectRefusal(await exchange(t, M), {
      status: 401,
      title: "Unauthorized",
      code: "wrong_api_secret",
      detail: WRONG,
      path: TOKEN_PATH,
      error: "invalid_client",
      wwwAuthenticate: API_KEY_CHALLENGE,
      rule: RULE,
    });
    expectToken(await exchange(t, { key: M.key, secret: NEW_SECRET }), 3600, RULE);

    // Tokens already issued keep working.
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(first)), first, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(third, { method: "POST" })), third, M.id, "POST", "/api/v2/cashout/payout");

    // Isolation: the default merchant's secret was not rotated.
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("merchant-disabled", () => {
  const NAME = "merchant-disabled";
  const M = creds(NAME);
  const RULE = rule(NAME, "revoke-key");
  const EXCHANGE_REFUSED =
    "The merchant of api_key 'merchant-disabled-key' is disabled, so it cannot get tokens. Use an active merchant's credentials.";
  const TOKEN_REFUSED =
    "The merchant of this token ('m_merchant_disabled') has been disabled since the token was issued; its tokens are no longer accepted. Use an active merchant's credentials.";
  const INIT_REFUSED =
    "The merchant of this payment token ('m_merchant_disabled') is disabled, so it cannot start payments. Use an active merchant's payment token.";

  it("right after the 1st exchange the merchant is disabled: its token, exchanges, payment/init and login are refused", async () => {
    const t = await start({ scenarios: [NAME] });
    expectToken(await exchange(t, DEFAULT));
    expectToken(await exchange(t, DEFAULT));

    // The first exchange works and only moves the scenario to its next state.
    const token = expectToken(await exchange(t, M), 3600, rule(NAME, "first-exchange"));

    invalidToken(await t.call("/api/v2/payment/status", bearer(token)), "merchant_disabled", TOKEN_REFUSED, "/api/v2/payment/status", RULE);
    invalidToken(
      await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })),
      "merchant_disabled",
      TOKEN_REFUSED,
      "/api/v2/cashout/payout",
      RULE,
    );
    for (let i = 0; i < 2; i++) {
      expectRefusal(await exchange(t, M), {
        status: 401,
        title: "Unauthorized",
        code: "merchant_disabled",
        detail: EXCHANGE_REFUSED,
        path: TOKEN_PATH,
        error: "invalid_client",
        wwwAuthenticate: API_KEY_CHALLENGE,
        rule: RULE,
      });
    }
    invalidToken(await t.call(INIT_PATH, init(M.paymentToken)), "merchant_disabled", INIT_REFUSED, INIT_PATH, RULE);
    // The deprecated login refuses the disabled merchant in Lexik's shape.
    const login = await t.call(LOGIN_PATH, postJson({ username: M.email, password: M.password }));
    expect(login.status).toBe(401);
    expect(login.json).toEqual({ code: 401, message: "Invalid credentials." });

    // Isolation: the default merchant is not disabled.
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("token-endpoint-outage", () => {
  const NAME = "token-endpoint-outage";
  const M = creds(NAME);
  const RULE = rule(NAME, "outage");
  const DOWN = simulated("Service Unavailable", NAME, "outage", 30);

  it("the first two exchanges get 503 with Retry-After: 30, the third works", async () => {
    const t = await start({ scenarios: [NAME] });
    // The default merchant's exchanges work during the outage and do not use up its two calls.
    expectToken(await exchange(t, DEFAULT));
    expectToken(await exchange(t, DEFAULT));
    expectToken(await exchange(t, DEFAULT));

    for (let i = 0; i < 2; i++) {
      const r = await exchange(t, M);
      expectRefusal(r, {
        status: 503,
        title: "Service Unavailable",
        code: "service_unavailable",
        detail: DOWN,
        path: TOKEN_PATH,
        error: "temporarily_unavailable",
        rule: RULE,
        retryAfter: "30",
      });
      // The client honours Retry-After.
      t.sandbox.clock.advance(30_000);
    }
    const token = expectToken(await exchange(t, M));
    expect(decodeJwt(token).iat).toBe(T0_SECONDS + 60);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expectToken(await exchange(t, M));

    await expectDefaultMerchantUnaffected(t, T0 + 60_000);
  });
});

describe("token-rate-limited", () => {
  const NAME = "token-rate-limited";
  const M = creds(NAME);
  const RULE = rule(NAME, "rate-limit");
  const LIMITED = simulated("Too Many Requests", NAME, "rate-limit", 10);

  it("the 1st exchange works, the 2nd and 3rd get 429 with Retry-After: 10, the 4th works", async () => {
    const t = await start({ scenarios: [NAME] });
    expectToken(await exchange(t, DEFAULT));
    expectToken(await exchange(t, DEFAULT));

    const first = expectToken(await exchange(t, M));
    for (let i = 0; i < 2; i++) {
      expectRefusal(await exchange(t, M), {
        status: 429,
        title: "Too Many Requests",
        code: "rate_limited",
        detail: LIMITED,
        path: TOKEN_PATH,
        error: "rate_limited",
        rule: RULE,
        retryAfter: "10",
      });
      t.sandbox.clock.advance(10_000);
    }
    const fourth = expectToken(await exchange(t, M));
    expectToken(await exchange(t, M));
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(first)), first, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(fourth)), fourth, M.id, "GET", "/api/v2/payment/status");

    // Isolation: the default merchant is not rate-limited, right after the scenario's limit either.
    await expectDefaultMerchantUnaffected(t, T0 + 20_000);
  });
});

describe("server-clock-ahead", () => {
  const NAME = "server-clock-ahead";
  const M = creds(NAME);

  it("tokens say iat/exp 2 h in the client's future; the sandbox accepts them", async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M));
    const claims = decodeJwt(token);
    expect(claims.iat).toBe(T0_SECONDS + 7200);
    expect(claims.exp).toBe(T0_SECONDS + 7200 + 3600);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })), token, M.id, "POST", "/api/v2/cashout/payout");
    // payment/init stamps the payment on the scenario's clock too.
    expectPaymentCreated(await t.call(INIT_PATH, init(M.paymentToken)), M.id, T0 + 7200_000);

    // Isolation: the default merchant's clock is the sandbox clock.
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("server-clock-behind", () => {
  const NAME = "server-clock-behind";
  const M = creds(NAME);

  it("tokens say iat 2 h in the client's past (expired an hour ago by its clock); the sandbox accepts them", async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M));
    const claims = decodeJwt(token);
    expect(claims.iat).toBe(T0_SECONDS - 7200);
    expect(claims.exp).toBe(T0_SECONDS - 3600);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })), token, M.id, "POST", "/api/v2/cashout/payout");
    expectPaymentCreated(await t.call(INIT_PATH, init(M.paymentToken)), M.id, T0 - 7200_000);

    await expectDefaultMerchantUnaffected(t);
  });
});

describe("signing-key-rotation", () => {
  const NAME = "signing-key-rotation";
  const M = creds(NAME);
  const RULE = rule(NAME, "rotate-key-on-third-call");

  it("the 3rd payment/cashout call rotates the key (old dropped): 401 token_unknown_kid; a new token works", async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M));
    const oldKid = decodeProtectedHeader(token).kid!;
    const defaultToken = expectToken(await exchange(t, DEFAULT));
    const defaultKid = decodeProtectedHeader(defaultToken).kid!;
    expect(await jwksKids(t)).toContain(oldKid);
    // The default merchant's calls do not count toward the 3rd call.
    for (let i = 0; i < 3; i++) {
      expectAuthenticated(
        await t.call("/api/v2/payment/status", bearer(defaultToken)),
        defaultToken,
        DEFAULT_MERCHANT_ID,
        "GET",
        "/api/v2/payment/status",
      );
    }

    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })), token, M.id, "POST", "/api/v2/cashout/payout");
    invalidToken(
      await t.call("/api/v2/payment/status", bearer(token)),
      "token_unknown_kid",
      unknownKidMessage(oldKid),
      "/api/v2/payment/status",
      RULE,
    );
    // And from then on, without the rule.
    invalidToken(
      await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })),
      "token_unknown_kid",
      unknownKidMessage(oldKid),
      "/api/v2/cashout/payout",
    );

    const renewed = expectToken(await exchange(t, M));
    const newKid = decodeProtectedHeader(renewed).kid!;
    expect(newKid).not.toBe(oldKid);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(renewed)), renewed, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(renewed, { method: "POST" })), renewed, M.id, "POST", "/api/v2/cashout/payout");

    // Isolation: the default merchant's token, key and calls are untouched.
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    await expectDefaultMerchantUnaffected(t);

    // The JWKS publishes the new key and the default merchant's key (its tokens must stay
    // verifiable), and no longer the dropped one: what the 401 says ("not one of this sandbox's
    // keys") and what a client verifying with the JWKS sees must agree.
    const jwks = await t.call(JWKS_PATH);
    const kids = (jwks.json.keys as JWK[]).map((k) => k.kid);
    expect(kids).toContain(newKid);
    expect(kids).toContain(defaultKid);
    const keySet = createLocalJWKSet(jwks.json);
    const verifyOptions = { issuer: ISSUER, audience: AUDIENCE, currentDate: new Date(T0) };
    await expect(jwtVerify(renewed, keySet, verifyOptions)).resolves.toMatchObject({ payload: decodeJwt(renewed) });
    await expect(jwtVerify(defaultToken, keySet, verifyOptions)).resolves.toMatchObject({ payload: decodeJwt(defaultToken) });
    // A scenario that rotates starts on a key of its own, so the dropped key leaves the JWKS.
    expect(kids).not.toContain(oldKid);
    await expect(jwtVerify(token, keySet, verifyOptions)).rejects.toThrow();
  });
});

describe("signing-key-rotation-overlap", () => {
  const NAME = "signing-key-rotation-overlap";
  const M = creds(NAME);
  const RULE = rule(NAME, "rotate-key-keep-old");

  it("the 2nd payment/cashout call rotates with overlap: the old token keeps working, the JWKS has both, new tokens use the new kid", async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M));
    const oldKid = decodeProtectedHeader(token).kid!;
    const defaultToken = expectToken(await exchange(t, DEFAULT));
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    const defaultKid = decodeProtectedHeader(defaultToken).kid!;
    // A scenario that rotates starts on a key of its own, beside the default merchant's.
    expect(oldKid).not.toBe(defaultKid);
    expect((await jwksKids(t)).sort()).toEqual([oldKid, defaultKid].sort());

    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    // The 2nd call rotates, and (overlap) is still accepted.
    expectAuthenticated(
      await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })),
      token,
      M.id,
      "POST",
      "/api/v2/cashout/payout",
      RULE,
    );
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");

    const renewed = expectToken(await exchange(t, M));
    const newKid = decodeProtectedHeader(renewed).kid!;
    expect(newKid).not.toBe(oldKid);
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(renewed)), renewed, M.id, "GET", "/api/v2/payment/status");
    expectAuthenticated(await t.call("/api/v2/cashout/payout", bearer(token, { method: "POST" })), token, M.id, "POST", "/api/v2/cashout/payout");

    const jwks = await t.call(JWKS_PATH);
    expect(jwks.status).toBe(200);
    expect(jwks.headers.get("cache-control")).toBe("public, max-age=60");
    const kids = (jwks.json.keys as JWK[]).map((k) => k.kid);
    expect(kids).toHaveLength(3);
    expect(kids).toEqual(expect.arrayContaining([oldKid, newKid, defaultKid]));
    const keySet = createLocalJWKSet(jwks.json);
    for (const tok of [token, renewed, defaultToken]) {
      await expect(jwtVerify(tok, keySet, { issuer: ISSUER, audience: AUDIENCE, currentDate: new Date(T0) })).resolves.toMatchObject({
        payload: decodeJwt(tok),
      });
    }

    // Isolation: the default merchant still signs with, and is accepted under, its own key.
    expectAuthenticated(
      await t.call("/api/v2/payment/status", bearer(defaultToken)),
      defaultToken,
      DEFAULT_MERCHANT_ID,
      "GET",
      "/api/v2/payment/status",
    );
    const freshDefault = expectToken(await exchange(t, DEFAULT));
    expect(decodeProtectedHeader(freshDefault).kid).toBe(defaultKid);
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("payment-token-expired", () => {
  const NAME = "payment-token-expired";
  const M = creds(NAME);
  const RULE = rule(NAME, "expire-payment-token");
  const EXPIRED =
    "The merchant payment token of 'm_payment_token_expired' has been expired. Get the merchant's current payment token from its configuration; payment/init cannot work until then.";

  it("the 1st payment/init works, from the 2nd on 401 payment_token_expired", async () => {
    const t = await start({ scenarios: [NAME] });
    expectPaymentCreated(await t.call(INIT_PATH, init(DEFAULT_PAYMENT_TOKEN)), DEFAULT_MERCHANT_ID, T0);
    expectPaymentCreated(await t.call(INIT_PATH, init(DEFAULT_PAYMENT_TOKEN)), DEFAULT_MERCHANT_ID, T0);

    expectPaymentCreated(await t.call(INIT_PATH, init(M.paymentToken)), M.id, T0);
    for (let i = 0; i < 2; i++) {
      const r = await t.call(INIT_PATH, init(M.paymentToken));
      invalidToken(r, "payment_token_expired", EXPIRED, INIT_PATH, RULE);
      expect(r.text).not.toContain(M.paymentToken);
    }

    // The access token is another matter: it still works on the protected groups.
    const token = expectToken(await exchange(t, M));
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");

    await expectDefaultMerchantUnaffected(t);
  });
});

describe("login-gone", () => {
  const NAME = "login-gone";
  const M = creds(NAME);
  const GONE = "POST /api/login_check has been removed. Exchange api_key and api_secret at POST /api/v2/auth/token instead.";

  it("the deprecated login answers 410 login_gone with the deprecation headers; the token exchange works", async () => {
    const t = await start({ scenarios: [NAME] });
    for (const body of [
      { username: M.email, password: M.password },
      { email: M.email, password: M.password },
      { username: M.email, password: "wrong-password" },
    ]) {
      const r = await t.call(LOGIN_PATH, postJson(body));
      expectRefusal(r, { status: 410, title: "Gone", code: "login_gone", detail: GONE, path: LOGIN_PATH, error: "gone" });
      expect(r.headers.get("deprecation")).toBe(DEPRECATION.deprecation);
      expect(r.headers.get("sunset")).toBe(DEPRECATION.sunset);
      expect(r.headers.get("link")).toBe(DEPRECATION.link);
      expect(r.text).not.toContain(M.password);
    }

    const token = expectToken(await exchange(t, M));
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");

    // Isolation: the default merchant's login is only deprecated, not gone.
    const login = await t.call(LOGIN_PATH, postJson({ username: DEFAULT.email, password: DEFAULT.password }));
    expect(login.status).toBe(200);
    expect(login.headers.get("link")).toBe(DEPRECATION.link);
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("cashout-without-scope", () => {
  const NAME = "cashout-without-scope";
  const M = creds(NAME);
  const NO_SCOPE =
    "The access token of merchant 'm_cashout_without_scope' has no 'cashout' scope (it has: payment). This merchant is not allowed to use /api/v2/cashout/ endpoints; ask for the 'cashout' right or use a merchant that has it.";

  it('payment calls work, cashout calls get 403 insufficient_scope with scope="cashout"', async () => {
    const t = await start({ scenarios: [NAME] });
    const token = expectToken(await exchange(t, M));
    expect(decodeJwt(token).scope).toBe("payment");
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    for (const [method, path] of [
      ["POST", "/api/v2/cashout/payout"],
      ["GET", "/api/v2/cashout/balance"],
    ] as const) {
      expectRefusal(await t.call(path, bearer(token, { method })), {
        status: 403,
        title: "Forbidden",
        code: "insufficient_scope",
        detail: NO_SCOPE,
        path,
        error: "insufficient_scope",
        wwwAuthenticate: challenge("insufficient_scope", NO_SCOPE, "cashout"),
      });
    }
    expectPaymentCreated(await t.call(INIT_PATH, init(M.paymentToken)), M.id, T0);

    // Isolation: the default merchant has both scopes.
    await expectDefaultMerchantUnaffected(t);
  });
});

describe("token-connection-dropped", () => {
  const NAME = "token-connection-dropped";
  const M = creds(NAME);

  it("the 1st exchange loses its connection (fetch rejects), the 2nd works", async () => {
    const t = await start({ scenarios: [NAME] });
    // The default merchant's first exchange is not dropped, and does not use up the scenario's.
    expectToken(await exchange(t, DEFAULT));

    await expect(exchange(t, M)).rejects.toThrow(TypeError);
    const token = expectToken(await exchange(t, M));
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expectToken(await exchange(t, M));

    await expectDefaultMerchantUnaffected(t);
  });
});

describe("slow-token-endpoint", () => {
  const NAME = "slow-token-endpoint";
  const M = creds(NAME);
  const RULE = rule(NAME, "slow");

  it("every exchange waits 3 s (injected sleep, nothing really waits) and then answers 200", async () => {
    const recorded: number[] = [];
    const t = await start({ scenarios: [NAME], sleep: async (ms) => void recorded.push(ms) });

    const token = expectToken(await exchange(t, M), 3600, RULE);
    expect(recorded).toEqual([3000]);
    // Only the token endpoint is slow.
    expectAuthenticated(await t.call("/api/v2/payment/status", bearer(token)), token, M.id, "GET", "/api/v2/payment/status");
    expect(recorded).toEqual([3000]);
    expectToken(await exchange(t, M), 3600, RULE);
    expect(recorded).toEqual([3000, 3000]);

    // Isolation: the default merchant's exchange does not wait.
    await expectDefaultMerchantUnaffected(t);
    expect(recorded).toEqual([3000, 3000]);
  });
});

describe("all library scenarios in one server", () => {
  const ALL = LIBRARY.filter((n) => n !== "default");

  /** How each scenario's merchant gets its first token, honouring Retry-After and retrying a dropped connection. */
  const FIRST_EXCHANGE: Partial<Record<LibraryName, Array<number | "dropped">>> = {
    "token-endpoint-outage": [503, 503, 200],
    "token-connection-dropped": ["dropped", 200],
  };

  it("health lists every scenario plus default, and every scenario's merchant gets a working token", async () => {
    const recorded: number[] = [];
    const t = await start({ scenarios: [...ALL], sleep: async (ms) => void recorded.push(ms) });

    const health = await t.call("/__sandbox/health");
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: "ok", version: t.sandbox.version, scenarios: [...ALL, "default"] });

    for (const name of ALL) {
      const M = creds(name);
      const seen: Array<number | "dropped"> = [];
      let token: string | undefined;
      for (let attempt = 0; attempt < 5 && !token; attempt++) {
        let r: Reply;
        try {
          r = await exchange(t, M);
        } catch {
          seen.push("dropped");
          continue;
        }
        seen.push(r.status);
        if (r.status === 200) token = r.json.access_token;
        else t.sandbox.clock.advance(Number(r.headers.get("retry-after")) * 1000);
      }
      expect(seen, name).toEqual(FIRST_EXCHANGE[name] ?? [200]);
      const claims = decodeJwt(token!);
      expect(claims.sub, name).toBe(M.id);
      expect(claims.client_id, name).toBe(M.key);
      const r = await t.call("/api/v2/payment/status", bearer(token!));
      if (name === "merchant-disabled") {
        // Its key is revoked right after the first exchange, by design.
        expect(r.json.code, name).toBe("merchant_disabled");
        continue;
      }
      expect(r.status, `${name}: ${r.text}`).toBe(200);
      expect(r.json.merchant_id).toBe(M.id);
    }
    expect(recorded).toEqual([3000]);

    const defaultToken = expectToken(await exchange(t, DEFAULT));
    expect(decodeJwt(defaultToken).sub).toBe(DEFAULT_MERCHANT_ID);
  });
});
