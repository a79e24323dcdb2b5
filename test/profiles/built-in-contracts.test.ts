import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redact } from "../../src/core/redact.js";
import {
  DEFAULT_KEY,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  postJson,
  problem,
  startTestServer,
  type Reply,
  type TestServer,
} from "../support/server.js";

/**
 * Black-box contract of each built-in response profile, over real HTTP: the same requests, the
 * same decisions (statuses, codes in the journal), each answer in the profile's wire shape. The
 * profiles copied from frameworks (lexik, spring, laravel) answer per code, each exactly as its
 * framework does: test/profiles/framework-builtins.test.ts.
 */

const TOKEN = "/api/v2/auth/token";
const WRONG_SECRET_MESSAGE =
  "The api_secret does not match the api_key 'sandbox-api-key'. Check that the secret belongs to this key and was not rotated.";
const UNKNOWN_KEY = "unknown-key-7c1f";
const UNKNOWN_KEY_MESSAGE = `The api_key ${redact(UNKNOWN_KEY)} is not known to this sandbox. Use the api_key of a loaded merchant (loaded: 'sandbox-api-key'), and check that api_key and api_secret are not swapped.`;
const NO_TOKEN_MESSAGE = "No credentials were sent. Send the access token as 'Authorization: Bearer <token>' (get one from POST /api/v2/auth/token).";
const EXPIRED_MESSAGE =
  "The access token expired at 2026-01-01T01:00:00.000Z (sandbox time is now 2026-01-01T01:01:00.000Z). Renew it before it expires: Request a new access token from POST /api/v2/auth/token.";
const JWT_ON_INIT_MESSAGE =
  "This is a JWT access token, but POST /api/v2/payment/init is authorised by the merchant payment token (a separate, long-lived opaque token configured per merchant), not by the token from /api/v2/auth/token. Send the payment token as 'Authorization: Bearer <payment token>'.";
const API_KEY_CHALLENGE = 'ApiKey realm="merchant-api", error="invalid_client"';
const bearerChallenge = (message: string) => `Bearer realm="merchant-api", error="invalid_token", error_description="${message}"`;

interface Refusal {
  status: number;
  title: string;
  code: string;
  message: string;
  instance: string;
  error?: string;
}

/** The sandbox's explanation of a refused login, which a profile puts where its messages go. */
const LOGIN_REJECTED_MESSAGE =
  "Invalid credentials: the e-mail is unknown, the password wrong, or the merchant disabled. Send a loaded merchant's login, or move to POST /api/v2/auth/token.";

/** What each profile answers: its refusal, token, login, payment/init and protected bodies. */
interface Contract {
  refusalType: string;
  refusal(r: Refusal): unknown;
  token(accessToken: string): unknown;
  login(token: string): unknown;
  paymentInit(today: Record<string, unknown>): unknown;
  protectedCall(today: Record<string, unknown>): unknown;
}

const CONTRACTS: Record<string, Contract> = {
  oauth: {
    refusalType: "application/problem+json",
    refusal: (r) => problem(r.status, r.title, r.code, r.message, r.instance, r.error),
    token: (t) => ({ access_token: t, token_type: "Bearer", expires_in: 3600 }),
    login: (t) => ({ token: t }),
    paymentInit: (today) => today,
    protectedCall: (today) => today,
  },
  camel: {
    refusalType: "application/json",
    refusal: (r) => ({ errorCode: r.code, errorMessage: r.message, status: r.status }),
    token: (t) => ({ accessToken: t, tokenType: "Bearer", expiresIn: 3600 }),
    login: (t) => ({ token: t }),
    paymentInit: (today) => ({
      paymentId: today.payment_id,
      checkoutUrl: today.checkout_url,
      merchantId: today.merchant_id,
      status: "created",
      createdAt: today.created_at,
      expiresAt: today.expires_at,
    }),
    protectedCall: (today) => today,
  },
  envelope: {
    refusalType: "application/json",
    refusal: (r) => ({ status: "error", code: r.status, message: r.message, data: { error_code: r.code } }),
    token: (t) => ({ status: "success", code: 200, message: "Token issued", data: { access_token: t, token_type: "Bearer", expires_in: 3600 } }),
    login: (t) => ({ status: "success", code: 200, message: "Logged in", data: { token: t } }),
    paymentInit: (today) => ({ status: "success", code: 201, message: "Payment created", data: today }),
    protectedCall: (today) => ({ status: "success", code: 200, message: "OK", data: today }),
  },
};

function expectRefusal(r: Reply, contract: Contract, refusal: Refusal, challenge: string | null): void {
  expect(r.status).toBe(refusal.status);
  expect(r.headers.get("content-type")).toBe(contract.refusalType);
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.headers.get("www-authenticate")).toBe(challenge);
  expect(r.json).toEqual(contract.refusal(refusal));
}

describe.each(Object.keys(CONTRACTS))("the %s profile", (name) => {
  const contract = CONTRACTS[name]!;
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ profile: name });
  });
  afterAll(() => t.close());

  const exchange = (apiKey = DEFAULT_KEY, apiSecret = DEFAULT_SECRET) => t.call(TOKEN, postJson({ api_key: apiKey, api_secret: apiSecret }));
  const tokenOf = (r: Reply): string => (name === "oauth" ? r.json.access_token : name === "camel" ? r.json.accessToken : r.json.data.access_token);
  const placeholder = (token: string, path: string) => ({
    sandbox: true,
    merchant_id: DEFAULT_MERCHANT_ID,
    operation: `GET ${path}`,
    scope: "payment",
    token_id: decodeJwt(token).jti,
    expires_at: "2026-01-01T01:00:00.000Z",
    note: "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.",
  });

  it("token exchange: 200 in the profile's shape, not cached; the token calls a protected endpoint", async () => {
    t.sandbox.reset();
    const r = await exchange();
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("pragma")).toBe("no-cache");
    const token = tokenOf(r);
    expect(decodeJwt(token).sub).toBe(DEFAULT_MERCHANT_ID);
    expect(r.json).toEqual(contract.token(token));
    const call = await t.call("/api/v2/payment/orders", { headers: { authorization: `Bearer ${token}` } });
    expect(call.status).toBe(200);
    expect(call.headers.get("content-type")).toBe("application/json");
    expect(call.json).toEqual(contract.protectedCall(placeholder(token, "/api/v2/payment/orders")));
  });

  it("wrong secret: 401 wrong_api_secret in the profile's shape, with the ApiKey challenge; the journal keeps the sandbox's code", async () => {
    t.sandbox.reset();
    const r = await exchange(DEFAULT_KEY, "wr0ng-secret");
    const refusal = {
      status: 401,
      title: "Unauthorized",
      code: "wrong_api_secret",
      message: WRONG_SECRET_MESSAGE,
      instance: TOKEN,
      error: "invalid_client",
    };
    expectRefusal(r, contract, refusal, API_KEY_CHALLENGE);
    expect(t.sandbox.journal.list({}).map((e) => [e.status, e.code])).toEqual([[401, "wrong_api_secret"]]);
  });

  it("unknown api_key: 401 unknown_api_key in the profile's shape", async () => {
    const r = await exchange(UNKNOWN_KEY, "whatever-secret");
    const refusal = {
      status: 401,
      title: "Unauthorized",
      code: "unknown_api_key",
      message: UNKNOWN_KEY_MESSAGE,
      instance: TOKEN,
      error: "invalid_client",
    };
    expectRefusal(r, contract, refusal, API_KEY_CHALLENGE);
  });

  it("no Authorization on a protected call: 401 credentials_missing with the bare Bearer challenge", async () => {
    const r = await t.call("/api/v2/cashout/payouts");
    const refusal = {
      status: 401,
      title: "Unauthorized",
      code: "credentials_missing",
      message: NO_TOKEN_MESSAGE,
      instance: "/api/v2/cashout/payouts",
    };
    expectRefusal(r, contract, refusal, 'Bearer realm="merchant-api"');
  });

  it("a token after the sandbox clock moved past its exp: 401 token_expired", async () => {
    t.sandbox.reset();
    const token = tokenOf(await exchange());
    expect((await t.call("/__sandbox/clock", postJson({ advance: "61m" }))).status).toBe(200);
    try {
      const r = await t.call("/api/v2/payment/orders", { headers: { authorization: `Bearer ${token}` } });
      const refusal = {
        status: 401,
        title: "Unauthorized",
        code: "token_expired",
        message: EXPIRED_MESSAGE,
        instance: "/api/v2/payment/orders",
        error: "invalid_token",
      };
      expectRefusal(r, contract, refusal, bearerChallenge(EXPIRED_MESSAGE));
      expect(t.sandbox.journal.list({}).at(-1)?.code).toBe("token_expired");
    } finally {
      t.sandbox.reset();
    }
  });

  it("payment/init with the payment token: 201 in the profile's shape, Location kept", async () => {
    const r = await t.call("/api/v2/payment/init", postJson({ amount: 1999, currency: "EUR" }, { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` }));
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json");
    const today = name === "oauth" || name === "lexik" ? r.json : name === "camel" ? undefined : r.json.data;
    const paymentId = name === "camel" ? r.json.paymentId : today.payment_id;
    expect(r.headers.get("location")).toBe(`/api/v2/payment/${paymentId}`);
    const expected = {
      payment_id: paymentId,
      checkout_url: `https://checkout.sandbox.test/pay/${paymentId}`,
      merchant_id: DEFAULT_MERCHANT_ID,
      status: "created",
      created_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-01-01T00:30:00.000Z",
      amount: 1999,
      currency: "EUR",
      note: "Hosted checkout is not simulated beyond this answer; the URL is a sandbox placeholder.",
    };
    expect(r.json).toEqual(contract.paymentInit(expected));
  });

  it("payment/init with the JWT: 401 access_token_on_payment_init in the profile's shape", async () => {
    const jwt = tokenOf(await exchange());
    const r = await t.call("/api/v2/payment/init", postJson({ amount: 1 }, { authorization: `Bearer ${jwt}` }));
    const refusal = {
      status: 401,
      title: "Unauthorized",
      code: "access_token_on_payment_init",
      message: JWT_ON_INIT_MESSAGE,
      instance: "/api/v2/payment/init",
      error: "invalid_token",
    };
    expectRefusal(r, contract, refusal, bearerChallenge(JWT_ON_INIT_MESSAGE));
  });

  it("login: 200 in the profile's shape, with the deprecation headers", async () => {
    const r = await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("deprecation")).toBe("@1735689600");
    const token = name === "envelope" ? r.json.data.token : r.json.token;
    expect(decodeJwt(token).username).toBe("merchant@sandbox.test");
    expect(r.json).toEqual(contract.login(token));
  });

  it("login with a wrong password: 401 in the profile's refusal shape (Lexik's own body under oauth), no challenge, with the deprecation headers", async () => {
    const r = await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "wrong-password" }));
    expect(r.headers.get("deprecation")).toBe("@1735689600");
    if (name === "oauth") {
      expect(r.status).toBe(401);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.headers.get("www-authenticate")).toBeNull();
      expect(r.text).toBe('{"code":401,"message":"Invalid credentials."}');
      return;
    }
    const refusal = {
      status: 401,
      title: "Unauthorized",
      code: "login_invalid_credentials",
      message: LOGIN_REJECTED_MESSAGE,
      instance: "/api/login_check",
      error: "invalid_client",
    };
    expectRefusal(r, contract, refusal, null);
    expect(r.text).not.toContain("wrong-password");
  });

  it("never shapes the control plane's answers", async () => {
    const r = await t.call("/__sandbox/sessions", postJson({ scenarios: "x" }));
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.json.code).toBe("unknown_field");
  });
});
