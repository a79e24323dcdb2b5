import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { DEFAULT_MERCHANT_ID, T0, postJson, problem, serverPerDescribe, serversPerTest, type Reply } from "../support/server.js";

const PATH = "/api/login_check";
const EMAIL = "merchant@sandbox.test";
const PASSWORD = "sandbox-password";
const DEPRECATION = {
  deprecation: "@1735689600",
  sunset: "Wed, 30 Jun 2027 23:59:59 GMT",
  link: '</api/v2/auth/token>; rel="successor-version"',
};
/** The first generated value of a sandbox seeded with 1: the jti of its first token, with seededTokenIds. */
const FIRST_JTI_SEED_1 = "6b042125-686a-43e0-8a68-23cf5bee102e";

function expectDeprecationHeaders(r: Reply) {
  expect(r.headers.get("deprecation")).toBe(DEPRECATION.deprecation);
  expect(r.headers.get("sunset")).toBe(DEPRECATION.sunset);
  expect(r.headers.get("link")).toBe(DEPRECATION.link);
}

/** The default merchant with a login, and a disabled one; token ids from the seed. */
const OPTIONS = {
  seededTokenIds: true,
  merchants: [
    {
      id: DEFAULT_MERCHANT_ID,
      apiKey: "sandbox-api-key",
      apiSecret: "sandbox-api-secret",
      paymentToken: "sandbox-payment-token",
      login: { email: EMAIL, password: PASSWORD },
    },
    {
      id: "merchant_disabled",
      apiKey: "disabled-key",
      apiSecret: "disabled-secret",
      paymentToken: "disabled-payment-token",
      login: { email: "disabled@sandbox.test", password: "disabled-password" },
      disabled: true,
    },
  ],
};

/** Servers for single tests, closed after each. */
const startServer = serversPerTest();

describe("POST /api/login_check (deprecated mode, the default)", () => {
  const t = serverPerDescribe(OPTIONS);

  // The first token id of the seeded sequence: a server of its own, so no other test has taken it.
  it("username + password → 200 {token}, a Lexik-shaped JWT (typ JWT, username, roles)", async () => {
    const own = await startServer(OPTIONS);
    const r = await own.call(PATH, postJson({ username: EMAIL, password: PASSWORD }));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expectDeprecationHeaders(r);
    expect(Object.keys(r.json)).toEqual(["token"]);
    const token = r.json.token as string;
    expect(decodeProtectedHeader(token)).toEqual({ alg: "RS256", kid: own.sandbox.keys.signing.kid, typ: "JWT" });
    expect(decodeJwt(token)).toEqual({
      iss: "https://merchant-sandbox.test",
      sub: DEFAULT_MERCHANT_ID,
      aud: "merchant-api",
      iat: T0 / 1000,
      exp: T0 / 1000 + 3600,
      jti: FIRST_JTI_SEED_1,
      username: EMAIL,
      roles: ["ROLE_MERCHANT"],
    });
    expect(r.text).not.toContain(PASSWORD);
  });

  it("the token verifies against the published JWKS at sandbox time", async () => {
    const r = await t().call(PATH, postJson({ username: EMAIL, password: PASSWORD }));
    const jwks = (await t().call("/.well-known/jwks.json")).json;
    const { payload, protectedHeader } = await jwtVerify(r.json.token, createLocalJWKSet(jwks), {
      algorithms: ["RS256"],
      currentDate: new Date(T0),
      typ: "JWT",
      issuer: "https://merchant-sandbox.test",
      audience: "merchant-api",
    });
    expect(protectedHeader.typ).toBe("JWT");
    expect(payload.username).toBe(EMAIL);
    expect(payload.roles).toEqual(["ROLE_MERCHANT"]);
  });

  it("iat and exp follow the sandbox clock", async () => {
    t().sandbox.clock.advance(90_000);
    try {
      const r = await t().call(PATH, postJson({ username: EMAIL, password: PASSWORD }));
      expect(decodeJwt(r.json.token)).toMatchObject({ iat: T0 / 1000 + 90, exp: T0 / 1000 + 90 + 3600 });
    } finally {
      t().sandbox.clock.set(T0);
    }
  });

  it('{"email", "password"} works too, and the e-mail is matched case-insensitively', async () => {
    const r = await t().call(PATH, postJson({ email: EMAIL, password: PASSWORD }));
    expect(r.status).toBe(200);
    expectDeprecationHeaders(r);
    expect(decodeJwt(r.json.token)).toMatchObject({ sub: DEFAULT_MERCHANT_ID, username: EMAIL, roles: ["ROLE_MERCHANT"] });
    const upper = await t().call(PATH, postJson({ username: "Merchant@Sandbox.TEST", password: PASSWORD }));
    expect(upper.status).toBe(200);
    expect(decodeJwt(upper.json.token).username).toBe(EMAIL);
  });

  it("the login token is not an access token: with loginToken refused, payment endpoints refuse it", async () => {
    const strict = await startServer({ ...OPTIONS, loginToken: "refused" });
    const login = await strict.call(PATH, postJson({ username: EMAIL, password: PASSWORD }));
    const r = await strict.call("/api/v2/payment/status", { headers: { authorization: `Bearer ${login.json.token}` } });
    expect(r.status).toBe(401);
    expect(r.json.code).toBe("token_not_access_token");
  });

  it.each([
    ["a wrong password", { username: EMAIL, password: "wrong-password" }],
    ["the password in another case", { username: EMAIL, password: PASSWORD.toUpperCase() }],
    ["an unknown user", { username: "nobody@sandbox.test", password: PASSWORD }],
    ["an unknown e-mail", { email: "nobody@sandbox.test", password: PASSWORD }],
    ["a disabled merchant", { username: "disabled@sandbox.test", password: "disabled-password" }],
    ["the api_key and api_secret", { username: "sandbox-api-key", password: "sandbox-api-secret" }],
  ])("%s → 401 exactly {code: 401, message: 'Invalid credentials.'}", async (_what, body) => {
    const r = await t().call(PATH, postJson(body));
    expect(r.status).toBe(401);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.text).toBe('{"code":401,"message":"Invalid credentials."}');
    expect(r.json).toEqual({ code: 401, message: "Invalid credentials." });
    expectDeprecationHeaders(r);
    expect(r.text).not.toContain(body.password);
  });

  it.each<[string, unknown, string, string]>([
    ["no username", { password: PASSWORD }, "login_username_missing", 'The key "username" (or "email") must be provided as a non-empty string.'],
    [
      "an empty username",
      { username: "", password: PASSWORD },
      "login_username_missing",
      'The key "username" (or "email") must be provided as a non-empty string.',
    ],
    [
      "a non-string username",
      { username: 42, password: PASSWORD },
      "login_username_missing",
      'The key "username" (or "email") must be provided as a non-empty string.',
    ],
    ["no password", { username: EMAIL }, "login_password_missing", 'The key "password" must be provided as a non-empty string.'],
    ["an empty password", { email: EMAIL, password: "" }, "login_password_missing", 'The key "password" must be provided as a non-empty string.'],
    [
      "a non-string password",
      { username: EMAIL, password: ["x"] },
      "login_password_missing",
      'The key "password" must be provided as a non-empty string.',
    ],
  ])("%s → 400 problem", async (_what, body, code, description) => {
    const r = await t().call(PATH, postJson(body));
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.json).toEqual(problem(400, "Bad Request", code, description, PATH, "invalid_request"));
    expectDeprecationHeaders(r);
  });

  it("an empty JSON body → 400 login_body_missing", async () => {
    const r = await t().call(PATH, { method: "POST", headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      problem(
        400,
        "Bad Request",
        "login_body_missing",
        'POST /api/login_check takes a JSON body {"username": "<e-mail>", "password": "..."}.',
        PATH,
        "invalid_request",
      ),
    );
    expectDeprecationHeaders(r);
  });

  it("a JSON array → 400 body_not_object", async () => {
    const r = await t().call(PATH, postJson([EMAIL, PASSWORD]));
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      problem(
        400,
        "Bad Request",
        "body_not_object",
        "The request body is an array; POST /api/login_check takes a JSON object.",
        PATH,
        "invalid_request",
      ),
    );
    expect(r.text).not.toContain(PASSWORD);
    expectDeprecationHeaders(r);
  });

  // Regression test for a fixed bug (src/core/json-body.ts): the malformed-JSON message is the token endpoint's, so the
  // deprecated login tells its caller to send {"api_key", "api_secret"} (every refusal says
  // how to fix the request, docs/behaviour.md). It should show the login's own shape.
  it("malformed JSON → 400 body_malformed_json that shows the login's shape, without echoing the body", async () => {
    const r = await t().call(PATH, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"username": "${EMAIL}", "password": "${PASSWORD}"`,
    });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("body_malformed_json");
    expect(r.json.error).toBe("invalid_request");
    expect(r.text).not.toContain(PASSWORD);
    expectDeprecationHeaders(r);
    expect(r.json.detail).toMatch(/^The request body is not valid JSON/);
    expect(r.json.detail).not.toContain("api_key");
    expect(r.json.detail).toContain('"username"');
  });

  it.each([
    [
      "text/plain",
      "POST /api/login_check takes a JSON body, but the request says Content-Type: text/plain. Send the body as JSON with the header 'Content-Type: application/json'.",
    ],
    [
      "application/x-www-form-urlencoded",
      `POST /api/login_check takes a JSON body, but this one is form-encoded (Content-Type: application/x-www-form-urlencoded). Send the fields as a JSON object instead, with the header 'Content-Type: application/json': {"username": "<e-mail>", "password": "..."}.`,
    ],
  ])("a body sent as %s → 415", async (type, detail) => {
    const r = await t().call(PATH, { method: "POST", headers: { "content-type": type }, body: `username=${EMAIL}&password=${PASSWORD}` });
    expect(r.status).toBe(415);
    expect(r.json).toEqual(problem(415, "Unsupported Media Type", "unsupported_media_type", detail, PATH, "unsupported_media_type"));
    expect(r.text).not.toContain(PASSWORD);
    expectDeprecationHeaders(r);
  });

  it("a body with no Content-Type → 415 saying (none)", async () => {
    const r = await t().call(PATH, { method: "POST", body: new Uint8Array(Buffer.from(JSON.stringify({ username: EMAIL, password: PASSWORD }))) });
    expect(r.status).toBe(415);
    expect(r.json.detail).toBe(
      "POST /api/login_check takes a JSON body, but the request says Content-Type: (none). Send the body as JSON with the header 'Content-Type: application/json'.",
    );
    expectDeprecationHeaders(r);
  });

  it.each(["GET", "PUT", "DELETE"])("%s → 405 with Allow: POST and the deprecation headers", async (method) => {
    const r = await t().call(PATH, { method });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
    expect(r.json).toEqual(
      problem(405, "Method Not Allowed", "method_not_allowed", `${method} is not allowed on ${PATH}. Use POST.`, PATH, "method_not_allowed"),
    );
    expectDeprecationHeaders(r);
  });
});

describe("POST /api/login_check with a small body limit", () => {
  it("an oversized body → 413 with the deprecation headers", async () => {
    const t = await startServer({ maxBodyBytes: 256 });
    const r = await t.call(PATH, postJson({ username: EMAIL, password: PASSWORD, padding: "x".repeat(300) }));
    expect(r.status).toBe(413);
    expect(r.json).toEqual(
      problem(
        413,
        "Content Too Large",
        "payload_too_large",
        "The request body is larger than 256 bytes. Send only the fields the endpoint expects.",
        PATH,
        "payload_too_large",
      ),
    );
    expectDeprecationHeaders(r);
  });
});

describe("POST /api/login_check in gone mode", () => {
  const t = serverPerDescribe({ loginMode: "gone" });
  const GONE = problem(
    410,
    "Gone",
    "login_gone",
    "POST /api/login_check has been removed. Exchange api_key and api_secret at POST /api/v2/auth/token instead.",
    PATH,
    "gone",
  );

  it("valid credentials → 410 problem login_gone with the deprecation headers", async () => {
    const r = await t().call(PATH, postJson({ username: EMAIL, password: PASSWORD }));
    expect(r.status).toBe(410);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.json).toEqual(GONE);
    expectDeprecationHeaders(r);
    expect(r.text).not.toContain(PASSWORD);
  });

  it("any request to it is 410: wrong credentials, no body, another method", async () => {
    for (const init of [postJson({ username: EMAIL, password: "nope" }), { method: "POST" }, { method: "GET" }]) {
      const r = await t().call(PATH, init);
      expect(r.status).toBe(410);
      expect(r.json).toEqual(GONE);
      expectDeprecationHeaders(r);
    }
  });

  it("the successor still works", async () => {
    expect(await t().token()).toMatch(/^eyJ/);
  });
});

describe("the deprecation dates are settings", () => {
  it("Deprecation and Sunset follow loginDeprecatedAt and loginSunsetAt", async () => {
    const t = await startServer({ loginDeprecatedAt: "2025-03-01T12:00:00Z", loginSunsetAt: "2026-12-31T00:00:00Z" });
    const r = await t.call(PATH, postJson({ username: EMAIL, password: "nope" }));
    expect(r.status).toBe(401);
    expect(r.headers.get("deprecation")).toBe(`@${Date.UTC(2025, 2, 1, 12) / 1000}`);
    expect(r.headers.get("sunset")).toBe("Thu, 31 Dec 2026 00:00:00 GMT");
    expect(r.headers.get("link")).toBe(DEPRECATION.link);
  });
});
