import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  T0,
  postJson,
  problem,
  serverPerDescribe,
  serversPerTest,
  type Reply,
} from "../support/server.js";

const PATH = "/api/v2/payment/init";
/** The first payment id of a sandbox seeded with 1 (the default seed): generated once, fixed here. */
const FIRST_ID_SEED_1 = "pay_fp0a536cejfo7v0ofk57sybo";
const SECOND_ID_SEED_1 = "pay_vw316v3fyjobou0rzqas3gwa";
const NOTE = "Hosted checkout is not simulated beyond this answer; the URL is a sandbox placeholder.";
const ID_SHAPE = /^pay_[a-z0-9]{24}$/;

const JWT_ON_INIT = (how: string) =>
  `This is a JWT access token, but POST /api/v2/payment/init is authorised by the merchant payment token (a separate, long-lived opaque token configured per merchant), not by the token from /api/v2/auth/token. Send the payment token ${how}.`;
const UNKNOWN_TOKEN =
  "The merchant payment token is not known to this sandbox (expired, revoked, or mistyped). Use the payment token configured for your merchant (the built-in merchant's is in the README).";
const NO_CREDENTIALS =
  "No credentials were sent. Send the merchant payment token as 'Authorization: Bearer <token>' (the payment token configured for your merchant, not the JWT from /api/v2/auth/token).";

function init(token: string | undefined, body?: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

function created(paymentId: string, at = T0, merchantId = DEFAULT_MERCHANT_ID, echoed: Record<string, unknown> = {}) {
  return {
    payment_id: paymentId,
    checkout_url: `https://checkout.sandbox.test/pay/${paymentId}`,
    merchant_id: merchantId,
    status: "created",
    created_at: new Date(at).toISOString(),
    expires_at: new Date(at + 30 * 60_000).toISOString(),
    ...echoed,
    note: NOTE,
  };
}

function expectNoSecret(reply: Reply, secret: string) {
  expect(reply.text).not.toContain(secret);
  for (const [name, value] of reply.headers) {
    expect(`${name}: ${value}`).not.toContain(secret);
  }
}

/** Servers for single tests, closed after each. */
const startServer = serversPerTest();

describe("POST /api/v2/payment/init (default transport: Authorization: Bearer)", () => {
  const t = serverPerDescribe();

  // The first id of the seeded sequence: a server of its own, so no other test has taken it.
  it("201 with the exact placeholder for the default merchant", async () => {
    const r = await (await startServer()).call(PATH, init(DEFAULT_PAYMENT_TOKEN));
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("location")).toBe(`/api/v2/payment/${FIRST_ID_SEED_1}`);
    expect(r.json).toEqual(created(FIRST_ID_SEED_1));
    expect(r.json.payment_id).toMatch(ID_SHAPE);
    expect(r.json.created_at).toBe("2026-01-01T00:00:00.000Z");
    expect(r.json.expires_at).toBe("2026-01-01T00:30:00.000Z");
    expectNoSecret(r, DEFAULT_PAYMENT_TOKEN);
  });

  it("the next payment gets the next id of the seeded sequence", async () => {
    const own = await startServer();
    expect((await own.call(PATH, init(DEFAULT_PAYMENT_TOKEN))).json.payment_id).toBe(FIRST_ID_SEED_1);
    const r = await own.call(PATH, init(DEFAULT_PAYMENT_TOKEN));
    expect(r.status).toBe(201);
    expect(r.json).toEqual(created(SECOND_ID_SEED_1));
    expect(r.headers.get("location")).toBe(`/api/v2/payment/${SECOND_ID_SEED_1}`);
  });

  it("created_at and expires_at follow the sandbox clock", async () => {
    t().sandbox.clock.advance(5 * 60_000);
    try {
      const r = await t().call(PATH, init(DEFAULT_PAYMENT_TOKEN));
      expect(r.status).toBe(201);
      expect(r.json.created_at).toBe("2026-01-01T00:05:00.000Z");
      expect(r.json.expires_at).toBe("2026-01-01T00:35:00.000Z");
    } finally {
      t().sandbox.clock.set(T0);
    }
  });

  it("echoes amount, currency, order_id and reference from a JSON body, and nothing else", async () => {
    const r = await t().call(
      PATH,
      init(DEFAULT_PAYMENT_TOKEN, {
        amount: 1999,
        currency: "EUR",
        order_id: "order-42",
        reference: "ref-7",
        customer: { email: "x@y.test" },
        payment_token: DEFAULT_PAYMENT_TOKEN,
      }),
    );
    expect(r.status).toBe(201);
    expect(r.json).toEqual(
      created(r.json.payment_id, T0, DEFAULT_MERCHANT_ID, { amount: 1999, currency: "EUR", order_id: "order-42", reference: "ref-7" }),
    );
    expect(r.json.payment_id).toMatch(ID_SHAPE);
    expectNoSecret(r, DEFAULT_PAYMENT_TOKEN);
  });

  it("does not echo non-plain or oversized order fields", async () => {
    const r = await t().call(PATH, init(DEFAULT_PAYMENT_TOKEN, { amount: "12.50", currency: ["EUR"], order_id: "x".repeat(201), reference: null }));
    expect(r.status).toBe(201);
    expect(r.json).toEqual(created(r.json.payment_id, T0, DEFAULT_MERCHANT_ID, { amount: "12.50" }));
  });

  it("works with curl's default: -d '{}' sent as application/x-www-form-urlencoded", async () => {
    const r = await t().call(PATH, {
      method: "POST",
      headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}`, "content-type": "application/x-www-form-urlencoded" },
      body: "{}",
    });
    expect(r.status).toBe(201);
    expect(r.json).toEqual(created(r.json.payment_id));
  });

  it("regression (issue 13): a body not declared JSON was parsed and echoed; now it is not read at all, as documented", async () => {
    const auth = { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` };
    const order = '{"amount":500,"currency":"USD"}';
    for (const contentType of ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", undefined]) {
      const headers = { ...auth, ...(contentType && { "content-type": contentType }) };
      for (const body of [order, "amount=500&currency=USD", "{", "[1]"]) {
        const r = await t().call(PATH, { method: "POST", headers, body });
        expect({ contentType, body, status: r.status }).toEqual({ contentType, body, status: 201 });
        expect(r.json).toEqual(created(r.json.payment_id));
      }
    }
    // Declared JSON (any application/*+json, any parameters) it is read and echoed.
    for (const contentType of ["application/json", "application/json; charset=utf-8", "application/merge-patch+json"]) {
      const r = await t().call(PATH, { method: "POST", headers: { ...auth, "content-type": contentType }, body: order });
      expect(r.status).toBe(201);
      expect(r.json).toEqual(created(r.json.payment_id, T0, DEFAULT_MERCHANT_ID, { amount: 500, currency: "USD" }));
    }
  });

  it("the JWT access token → 401 access_token_on_payment_init with the teaching message", async () => {
    const jwt = await t().token();
    const r = await t().call(PATH, init(jwt, { amount: 100 }));
    const description = JWT_ON_INIT("as 'Authorization: Bearer <payment token>'");
    expect(r.status).toBe(401);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.json).toEqual(problem(401, "Unauthorized", "access_token_on_payment_init", description, PATH, "invalid_token"));
    expect(r.headers.get("www-authenticate")).toBe(`Bearer realm="merchant-api", error="invalid_token", error_description="${description}"`);
    expectNoSecret(r, jwt);
  });

  it("an unknown payment token → 401 payment_token_unknown, without echoing it", async () => {
    const r = await t().call(PATH, init("mpt_test_not_a_real_token"));
    expect(r.status).toBe(401);
    expect(r.json).toEqual(problem(401, "Unauthorized", "payment_token_unknown", UNKNOWN_TOKEN, PATH, "invalid_token"));
    expect(r.headers.get("www-authenticate")).toBe(`Bearer realm="merchant-api", error="invalid_token", error_description="${UNKNOWN_TOKEN}"`);
    expectNoSecret(r, "mpt_test_not_a_real_token");
  });

  it("the api_secret or api_key in its place is an unknown payment token", async () => {
    for (const wrong of ["sandbox-api-secret", "sandbox-api-key"]) {
      const r = await t().call(PATH, init(wrong));
      expect(r.status).toBe(401);
      expect(r.json.code).toBe("payment_token_unknown");
      expectNoSecret(r, wrong);
    }
  });

  it("no Authorization header → 401 with a bare Bearer challenge and no error code", async () => {
    const r = await t().call(PATH, { method: "POST" });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="merchant-api"');
    expect(r.json).toEqual(problem(401, "Unauthorized", "credentials_missing", NO_CREDENTIALS, PATH));
    expect(r.json).not.toHaveProperty("error");
  });

  it("another scheme → 400 authorization_not_bearer", async () => {
    const r = await t().call(PATH, { method: "POST", headers: { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` } });
    const description =
      "The Authorization header uses 'Basic', not the Bearer scheme. Send 'Authorization: Bearer <token>' with the merchant payment token.";
    expect(r.status).toBe(400);
    expect(r.json).toEqual(problem(400, "Bad Request", "authorization_not_bearer", description, PATH, "invalid_request"));
    expect(r.headers.get("www-authenticate")).toBe(`Bearer realm="merchant-api", error="invalid_request", error_description="${description}"`);
  });

  it.each(["GET", "PUT", "DELETE", "PATCH"])("%s → 405 with Allow: POST", async (method) => {
    const r = await t().call(PATH, { method, headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` } });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
    expect(r.json).toEqual(
      problem(405, "Method Not Allowed", "method_not_allowed", `${method} is not allowed on ${PATH}. Use POST.`, PATH, "method_not_allowed"),
    );
    expectNoSecret(r, DEFAULT_PAYMENT_TOKEN);
  });

  it("a declared-JSON body that is malformed → 400 body_malformed_json", async () => {
    const r = await t().call(PATH, {
      method: "POST",
      headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}`, "content-type": "application/json" },
      body: "{x}",
    });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("body_malformed_json");
    expect(r.json.error).toBe("invalid_request");
  });
});

describe("seeded payment ids", () => {
  const first = async (seed?: number) => {
    const s = await startServer(seed === undefined ? {} : { seed });
    const r = await s.call(PATH, init(DEFAULT_PAYMENT_TOKEN));
    expect(r.status).toBe(201);
    expect(r.json.payment_id).toMatch(ID_SHAPE);
    return r.json.payment_id as string;
  };

  it("two sandboxes with the same seed produce the same first payment_id; another seed a different one", async () => {
    const a = await first(7);
    const b = await first(7);
    const c = await first(8);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it("the default seed is 1", async () => {
    expect(await first()).toBe(FIRST_ID_SEED_1);
    expect(await first(1)).toBe(FIRST_ID_SEED_1);
    expect(await first(2)).not.toBe(FIRST_ID_SEED_1);
  });
});

describe("a custom merchant's payment token never appears in any response", () => {
  const TOKEN = "mpt_test_4f9c2a7e1b";
  const t = serverPerDescribe({
    merchants: [{ id: "shop_1", apiKey: "shop-key", apiSecret: "shop-secret", paymentToken: TOKEN }],
  });

  it("on success and on every refusal", async () => {
    const replies: Reply[] = [
      await t().call(PATH, init(TOKEN, { amount: 1, payment_token: TOKEN, order_id: "o1" })),
      await t().call(PATH, init(TOKEN.slice(0, -1))),
      await t().call(PATH, init(`${TOKEN}x`)),
      await t().call(PATH, { method: "GET", headers: { authorization: `Bearer ${TOKEN}` } }),
      await t().call(PATH, { method: "POST", headers: { authorization: `Token ${TOKEN}` } }),
      await t().call(PATH, { method: "POST", headers: { authorization: `Bearer "${TOKEN}"` } }),
      await t().call(PATH, init(TOKEN, "not an object")),
      await t().call(PATH, init(await t().token("shop-key", "shop-secret"))),
    ];
    expect(replies.map((r) => r.status)).toEqual([201, 401, 401, 405, 400, 400, 400, 401]);
    expect(replies[0]!.json).toEqual(created(replies[0]!.json.payment_id, T0, "shop_1", { amount: 1, order_id: "o1" }));
    for (const r of replies) expectNoSecret(r, TOKEN);
  });
});

describe("paymentTokenTransport header:X-Payment-Token", () => {
  const t = serverPerDescribe({ paymentTokenTransport: "header:X-Payment-Token" });

  // Expects the first seeded id: a server of its own, so no other test has taken it.
  it("accepts the token in X-Payment-Token (any case)", async () => {
    const own = await startServer({ paymentTokenTransport: "header:X-Payment-Token" });
    const r = await own.call(PATH, { method: "POST", headers: { "X-Payment-Token": DEFAULT_PAYMENT_TOKEN } });
    expect(r.status).toBe(201);
    expect(r.json).toEqual(created(FIRST_ID_SEED_1));
    const lower = await own.call(PATH, { method: "POST", headers: { "x-payment-token": ` ${DEFAULT_PAYMENT_TOKEN} ` } });
    expect(lower.status).toBe(201);
  });

  it("refuses the token in Authorization, saying where to send it", async () => {
    const r = await t().call(PATH, init(DEFAULT_PAYMENT_TOKEN));
    const description = "No merchant payment token was sent. Send it in the 'x-payment-token' header.";
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="merchant-api"');
    expect(r.json).toEqual(problem(401, "Unauthorized", "credentials_missing", description, PATH));
    expectNoSecret(r, DEFAULT_PAYMENT_TOKEN);
  });

  it("refuses an empty header the same way", async () => {
    const r = await t().call(PATH, { method: "POST", headers: { "x-payment-token": "" } });
    expect(r.status).toBe(401);
    expect(r.json.code).toBe("credentials_missing");
  });

  it("the JWT in the header → 401 with the teaching message naming the header", async () => {
    const jwt = await t().token();
    const r = await t().call(PATH, { method: "POST", headers: { "x-payment-token": jwt } });
    expect(r.status).toBe(401);
    expect(r.json).toEqual(
      problem(401, "Unauthorized", "access_token_on_payment_init", JWT_ON_INIT("in the 'x-payment-token' header"), PATH, "invalid_token"),
    );
    expectNoSecret(r, jwt);
  });

  it("an unknown token in the header → 401 payment_token_unknown", async () => {
    const r = await t().call(PATH, { method: "POST", headers: { "x-payment-token": "mpt_unknown" } });
    expect(r.status).toBe(401);
    expect(r.json).toEqual(problem(401, "Unauthorized", "payment_token_unknown", UNKNOWN_TOKEN, PATH, "invalid_token"));
  });

  it("the header sent twice → 400 payment_token_header_repeated", async () => {
    const r = await rawPost(t().url + PATH, { "x-payment-token": [DEFAULT_PAYMENT_TOKEN, DEFAULT_PAYMENT_TOKEN] });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toEqual(
      problem(
        400,
        "Bad Request",
        "payment_token_header_repeated",
        "The x-payment-token header was sent more than once. Send it once.",
        PATH,
        "invalid_request",
      ),
    );
    expect(r.text).not.toContain(DEFAULT_PAYMENT_TOKEN);
  });
});

// Regression test for a fixed bug (src/core/config.ts, parsePaymentTokenTransport): the object form of the setting is passed
// through unchecked, so a mixed-case header name is never lower-cased and never found.
describe("paymentTokenTransport as an object { kind: 'header', name: 'X-Payment-Token' }", () => {
  it("works like the string form", async () => {
    const t = await startServer({ paymentTokenTransport: { kind: "header", name: "X-Payment-Token" } });
    const r = await t.call(PATH, { method: "POST", headers: { "X-Payment-Token": DEFAULT_PAYMENT_TOKEN } });
    expect(r.status).toBe(201);
  });
});

describe("paymentTokenTransport body:payment_token", () => {
  const t = serverPerDescribe({ paymentTokenTransport: "body:payment_token" });
  const NOT_SENT = 'No merchant payment token was sent. Send it as the JSON body field "payment_token".';

  // Expects the first seeded id: a server of its own, so no other test has taken it.
  it("accepts the token in the JSON body and does not echo it", async () => {
    const r = await (await startServer({ paymentTokenTransport: "body:payment_token" })).call(
      PATH,
      postJson({ payment_token: DEFAULT_PAYMENT_TOKEN, amount: 250, currency: "EUR" }),
    );
    expect(r.status).toBe(201);
    expect(r.json).toEqual(created(FIRST_ID_SEED_1, T0, DEFAULT_MERCHANT_ID, { amount: 250, currency: "EUR" }));
    expectNoSecret(r, DEFAULT_PAYMENT_TOKEN);
  });

  it("refuses the token in Authorization, saying where to send it", async () => {
    const r = await t().call(PATH, init(DEFAULT_PAYMENT_TOKEN));
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="merchant-api"');
    expect(r.json).toEqual(problem(401, "Unauthorized", "credentials_missing", NOT_SENT, PATH));
    const withBody = await t().call(PATH, init(DEFAULT_PAYMENT_TOKEN, { amount: 1 }));
    expect(withBody.status).toBe(401);
    expect(withBody.json).toEqual(problem(401, "Unauthorized", "credentials_missing", NOT_SENT, PATH));
    const empty = await t().call(PATH, postJson({ payment_token: "" }));
    expect(empty.json).toEqual(problem(401, "Unauthorized", "credentials_missing", NOT_SENT, PATH));
  });

  it("a non-string payment_token → 400 payment_token_not_string", async () => {
    const r = await t().call(PATH, postJson({ payment_token: 12345 }));
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      problem(
        400,
        "Bad Request",
        "payment_token_not_string",
        'The body field "payment_token" must be a string holding the merchant payment token.',
        PATH,
        "invalid_request",
      ),
    );
  });

  it("a body that is not declared as JSON → 415", async () => {
    const r = await t().call(PATH, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `payment_token=${DEFAULT_PAYMENT_TOKEN}`,
    });
    expect(r.status).toBe(415);
    expect(r.json).toEqual(
      problem(
        415,
        "Unsupported Media Type",
        "unsupported_media_type",
        `POST /api/v2/payment/init takes a JSON body, but this one is form-encoded (Content-Type: application/x-www-form-urlencoded). Send the fields as a JSON object instead, with the header 'Content-Type: application/json': {"payment_token": "...", "amount": 1999, "currency": "EUR"}.`,
        PATH,
        "unsupported_media_type",
      ),
    );
    expectNoSecret(r, DEFAULT_PAYMENT_TOKEN);
  });

  it("the JWT in the body field → 401 with the teaching message naming the field", async () => {
    const jwt = await t().token();
    const r = await t().call(PATH, postJson({ payment_token: jwt }));
    expect(r.status).toBe(401);
    expect(r.json).toEqual(
      problem(401, "Unauthorized", "access_token_on_payment_init", JWT_ON_INIT('as the JSON body field "payment_token"'), PATH, "invalid_token"),
    );
    expectNoSecret(r, jwt);
  });
});

/** A POST with repeated headers, which fetch cannot send (it folds them into one). */
function rawPost(url: string, headers: Record<string, string | string[]>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { ...headers, "content-length": "0" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("a disabled merchant", () => {
  const t = serverPerDescribe({
    merchants: [{ id: "m_off", apiKey: "k_off", apiSecret: "s_off_secret_value", paymentToken: "pt_off_value", disabled: true }],
  });

  it("cannot start payments with its payment token: 401 merchant_disabled", async () => {
    const r = await t().call(PATH, init("pt_off_value", {}));
    const description =
      "The merchant of this payment token ('m_off') is disabled, so it cannot start payments. Use an active merchant's payment token.";
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe(`Bearer realm="merchant-api", error="invalid_token", error_description="${description}"`);
    expect(r.json).toEqual(problem(401, "Unauthorized", "merchant_disabled", description, PATH, "invalid_token"));
    expect(r.text).not.toContain("pt_off_value");
  });
});
