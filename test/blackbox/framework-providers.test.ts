import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { ClientSettings, FrameworkClient } from "../support/providers/framework-client.js";
import { EXPIRE_BY_MS, FLOW_PROTECTED_PATH, frameworkFlow } from "../support/providers/framework-flow.js";
import type { RunningProvider } from "../support/providers/kit.js";
import { laravelClient } from "../support/providers/laravel-client.js";
import { startLaravelProvider } from "../support/providers/laravel.js";
import { lexikClient } from "../support/providers/lexik-client.js";
import { startLexikProvider } from "../support/providers/lexik.js";
import { springClient } from "../support/providers/spring-client.js";
import { startSpringProvider } from "../support/providers/spring.js";
import { FRAMEWORK_TRANSCRIPTS } from "../support/providers/transcripts.js";

/**
 * The framework fakes (test/support/providers/lexik.ts, spring.ts, laravel.ts) and the clients
 * written for them agree: each client's whole flow against its own fake gives the transcript
 * written down in transcripts.ts (the one calibrate-frameworks.test.ts expects from the sandbox
 * too). And the fakes send what RESEARCH-24 read in the frameworks' sources, byte for byte where
 * it matters to a client: statuses, challenges, content types, bodies, the token's header and
 * claims, the skew, and the order of the checks.
 */

interface Raw {
  status: number;
  headers: Headers;
  body: string;
}

async function raw(url: string, init: RequestInit = {}): Promise<Raw> {
  const r = await fetch(url, init);
  return { status: r.status, headers: r.headers, body: await r.text() };
}

/** Status and body: what every refusal and answer below is compared on, at the least. */
const answer = (r: Raw): [number, string] => [r.status, r.body];
/** Status, body and challenge: a Spring refusal's body is empty, its challenge says why. */
const challenged = (r: Raw): [number, string, string | null] => [r.status, r.body, r.headers.get("www-authenticate")];

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}`, accept: "application/json" } });
const postJson = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json" },
  body: JSON.stringify(body),
});

function decodePart(jwt: string, i: 0 | 1): string {
  return Buffer.from(jwt.split(".")[i]!, "base64url").toString("utf8");
}

function badSignature(jwt: string): string {
  const dot = jwt.lastIndexOf(".");
  return `${jwt.slice(0, dot + 1)}${jwt[dot + 1] === "A" ? "B" : "A"}${jwt.slice(dot + 2)}`;
}

/**
 * Moves a fake's clock, shared by the tests of its describe, for the current test only: moved back
 * by as much when the test ends, passed or failed, so no other test (in any order) sees it moved.
 */
function advanceForTest(p: RunningProvider, ms: number): void {
  p.advanceClock(ms);
  onTestFinished(() => p.advanceClock(-ms));
}

const FRAMEWORKS: Array<{
  name: keyof typeof FRAMEWORK_TRANSCRIPTS;
  start: () => Promise<RunningProvider>;
  client: (s: ClientSettings) => FrameworkClient;
}> = [
  { name: "lexik", start: () => startLexikProvider(), client: lexikClient },
  { name: "spring", start: () => startSpringProvider(), client: springClient },
  { name: "laravel", start: () => startLaravelProvider(), client: laravelClient },
];

describe.each(FRAMEWORKS)("the $name fake and its client", (f) => {
  let provider: RunningProvider;
  beforeAll(async () => {
    provider = await f.start();
  });
  afterAll(() => provider.close());

  it("agree: the client's whole flow against the fake gives the written transcript", async () => {
    const lines = await frameworkFlow(f.client, { baseUrl: provider.url, ...provider.credentials }, async () => provider.advanceClock(EXPIRE_BY_MS));
    expect(lines).toEqual(FRAMEWORK_TRANSCRIPTS[f.name]);
    // The transcript names no secret and no token.
    const text = lines.join("\n");
    for (const s of [provider.credentials.apiSecret, provider.credentials.paymentToken, provider.credentials.password, ...provider.issued])
      expect(text).not.toContain(s);
  });
});

describe("the lexik fake sends what LexikJWTAuthenticationBundle 3.x sends", () => {
  let p: RunningProvider;
  let token: string;
  beforeAll(async () => {
    p = await startLexikProvider();
    token = JSON.parse(
      (await raw(`${p.url}/api/v2/auth/token`, postJson({ api_key: p.credentials.apiKey, api_secret: p.credentials.apiSecret }))).body,
    ).token;
  });
  afterAll(() => p.close());
  const url = () => p.url + FLOW_PROTECTED_PATH;

  it("a missing, non-Bearer or three-part Authorization is 'JWT Token not found': 44 bytes, Bearer challenge, application/json", async () => {
    for (const init of [{}, { headers: { authorization: "Basic abc" } }, { headers: { authorization: "Bearer a b" } }]) {
      const r = await raw(url(), init);
      expect(r.status).toBe(401);
      expect(r.body).toBe('{"code":401,"message":"JWT Token not found"}');
      expect(r.body.length).toBe(44);
      expect(r.headers.get("www-authenticate")).toBe("Bearer");
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.headers.get("cache-control")).toBe("no-cache, private");
      expect(r.headers.get("x-request-id")).toBeNull();
    }
  });

  it("order of checks: an expired token with a bad signature is 'Expired JWT Token' (expiry before signature); skew 0", async () => {
    const expired = await p.expiredToken();
    expect(answer(await raw(url(), bearer(badSignature(expired))))).toEqual([401, '{"code":401,"message":"Expired JWT Token"}']);
    expect(answer(await raw(url(), bearer(badSignature(token))))).toEqual([401, '{"code":401,"message":"Invalid JWT Token"}']);
    const { exp } = JSON.parse(decodePart(token, 1)) as { exp: number };
    advanceForTest(p, exp * 1000 - Date.now() - 1500);
    expect(answer(await raw(url(), bearer(token)))).toEqual([200, `{"operation":"payment.status","merchant":"${p.credentials.merchantId}"}`]);
    advanceForTest(p, 1500);
    expect(answer(await raw(url(), bearer(token)))).toEqual([401, '{"code":401,"message":"Expired JWT Token"}']);
  });

  it("the token: header {typ, alg} without kid, claims iat, exp, roles, username (the e-mail) in that order, one hour", () => {
    expect(decodePart(token, 0)).toBe('{"typ":"JWT","alg":"RS256"}');
    const claims = JSON.parse(decodePart(token, 1)) as Record<string, unknown>;
    expect(Object.keys(claims)).toEqual(["iat", "exp", "roles", "username"]);
    expect(claims).toMatchObject({ roles: ["ROLE_USER"], username: p.credentials.email });
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
  });

  it("login: 'Invalid credentials.' 45 bytes with the Bearer challenge; a request that is not JSON is Symfony's 404 problem", async () => {
    const bad = await raw(`${p.url}/api/login_check`, postJson({ username: p.credentials.email, password: "nope" }));
    expect([bad.status, bad.body, bad.body.length, bad.headers.get("www-authenticate")]).toEqual([
      401,
      '{"code":401,"message":"Invalid credentials."}',
      45,
      "Bearer",
    ]);
    const form = await raw(`${p.url}/api/login_check`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "username=a",
    });
    expect(form.status).toBe(404);
    expect(form.body).toBe(
      '{"type":"https:\\/\\/tools.ietf.org\\/html\\/rfc2616#section-10","title":"An error occurred","status":404,"detail":"Not Found"}',
    );
    const missing = await raw(`${p.url}/api/v2/auth/token`, postJson({ api_key: p.credentials.apiKey }));
    expect([missing.status, missing.body, missing.headers.get("vary")]).toEqual([
      400,
      '{"type":"https:\\/\\/tools.ietf.org\\/html\\/rfc2616#section-10","title":"An error occurred","status":400,"detail":"Bad Request"}',
      "Accept",
    ]);
  });

  it("JsonResponse's flags: '/' is escaped as \\/ in the payment's URL", async () => {
    const r = await raw(`${p.url}/api/v2/payment/init`, { method: "POST", headers: { authorization: `Bearer ${p.credentials.paymentToken}` } });
    expect(r.status).toBe(201);
    expect(r.body).toMatch(/^\{"id":"pay_[0-9a-f]{16}","url":"https:\\\/\\\/pay\.lexik-provider\.test\\\/checkout\\\/pay_[0-9a-f]{16}"\}$/);
  });
});

describe("the spring fake sends what Spring Security 6.5's resource server and Spring Boot 3.5 send", () => {
  let p: RunningProvider;
  let token: string;
  beforeAll(async () => {
    p = await startSpringProvider();
    token = JSON.parse(
      (await raw(`${p.url}/api/v2/auth/token`, postJson({ api_key: p.credentials.apiKey, api_secret: p.credentials.apiSecret }))).body,
    ).access_token;
  });
  afterAll(() => p.close());
  const url = () => p.url + FLOW_PROTECTED_PATH;
  const URI = 'error_uri="https://tools.ietf.org/html/rfc6750#section-3.1"';

  it("refusals of a bearer token have no body and no Content-Type; the challenge says it all; security headers on each", async () => {
    const none = await raw(url());
    expect([none.status, none.body, none.headers.get("content-type"), none.headers.get("www-authenticate")]).toEqual([401, "", null, "Bearer"]);
    expect(none.headers.get("x-frame-options")).toBe("DENY");
    expect(none.headers.get("cache-control")).toBe("no-cache, no-store, max-age=0, must-revalidate");
    expect(challenged(await raw(url(), { headers: { authorization: "Basic abc" } }))).toEqual([401, "", "Bearer"]);
    expect(challenged(await raw(url(), { headers: { authorization: "Bearer a b" } }))).toEqual([
      401,
      "",
      `Bearer error="invalid_token", error_description="Bearer token is malformed", ${URI}`,
    ]);
    expect(challenged(await raw(url(), bearer("abc")))).toEqual([
      401,
      "",
      `Bearer error="invalid_token", error_description="An error occurred while attempting to decode the Jwt: Malformed token", ${URI}`,
    ]);
  });

  it("order of checks: an expired token with a bad signature is refused for its signature; 60 s of skew; 'Jwt expired at <Instant>'", async () => {
    const expired = await p.expiredToken();
    expect(challenged(await raw(url(), bearer(badSignature(expired))))).toEqual([
      401,
      "",
      `Bearer error="invalid_token", error_description="An error occurred while attempting to decode the Jwt: Signed JWT rejected: Invalid signature", ${URI}`,
    ]);
    const { exp } = JSON.parse(decodePart(token, 1)) as { exp: number };
    const atExp = exp * 1000 - Date.now();
    advanceForTest(p, atExp + 59_000);
    expect(answer(await raw(url(), bearer(token)))).toEqual([200, `{"merchantId":"${p.credentials.merchantId}","operation":"payment.status"}`]);
    advanceForTest(p, 2_000);
    const late = await raw(url(), bearer(token));
    const at = new Date(exp * 1000).toISOString().replace(".000Z", "Z");
    expect([late.status, late.body, late.headers.get("www-authenticate")]).toEqual([
      401,
      "",
      `Bearer error="invalid_token", error_description="An error occurred while attempting to decode the Jwt: Jwt expired at ${at}", ${URI}`,
    ]);
  });

  it("controller errors are Boot's body: timestamp (Jackson, .SSS+00:00), status, error, path, in that order; 405 with Allow", async () => {
    const wrong = await raw(`${p.url}/api/v2/auth/token`, postJson({ api_key: p.credentials.apiKey, api_secret: "nope" }));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("content-type")).toBe("application/json");
    expect(wrong.headers.get("www-authenticate")).toBeNull();
    expect(wrong.body).toMatch(
      /^\{"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00","status":401,"error":"Unauthorized","path":"\/api\/v2\/auth\/token"\}$/,
    );
    const get = await raw(`${p.url}/api/v2/auth/token`);
    expect([get.status, get.headers.get("allow")]).toEqual([405, "POST"]);
    expect(get.body).toMatch(
      /^\{"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00","status":405,"error":"Method Not Allowed","path":"\/api\/v2\/auth\/token"\}$/,
    );
  });

  it("the token: header {alg} only, claims of the app's NimbusJwtEncoder, one hour", () => {
    expect(decodePart(token, 0)).toBe('{"alg":"RS256"}');
    expect(Object.keys(JSON.parse(decodePart(token, 1)))).toEqual(["iss", "sub", "exp", "iat", "scope"]);
  });
});

describe("the laravel fake sends what tymon/jwt-auth 2.1 and Laravel send", () => {
  let p: RunningProvider;
  let token: string;
  beforeAll(async () => {
    p = await startLaravelProvider();
    token = JSON.parse(
      (await raw(`${p.url}/api/v2/auth/token`, postJson({ api_key: p.credentials.apiKey, api_secret: p.credentials.apiSecret }))).body,
    ).access_token;
  });
  afterAll(() => p.close());
  const url = () => p.url + FLOW_PROTECTED_PATH;

  it("jwt.auth's refusals: pretty-printed {message}, WWW-Authenticate: jwt-auth, and a new X-Request-Id on every answer", async () => {
    const a = await raw(url());
    const b = await raw(url());
    expect([a.status, a.body, a.headers.get("www-authenticate"), a.headers.get("content-type")]).toEqual([
      401,
      '{\n    "message": "Token not provided"\n}',
      "jwt-auth",
      "application/json",
    ]);
    expect(a.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
    expect(answer(await raw(url(), bearer("abc")))).toEqual([401, '{\n    "message": "Wrong number of segments"\n}']);
  });

  it("order of checks: an expired token with a bad signature is refused for its signature; leeway 0", async () => {
    const expired = await p.expiredToken();
    expect(answer(await raw(url(), bearer(badSignature(expired))))).toEqual([401, '{\n    "message": "Token Signature could not be verified."\n}']);
    expect(answer(await raw(url(), bearer(expired)))).toEqual([401, '{\n    "message": "Token has expired"\n}']);
    const { exp } = JSON.parse(decodePart(token, 1)) as { exp: number };
    const atExp = exp * 1000 - Date.now();
    advanceForTest(p, atExp - 1000);
    const inTime = await raw(url(), bearer(token));
    expect(answer(inTime)).toEqual([
      200,
      `{"success":true,"data":{"merchant_id":1,"operation":"payment.status"},"request_id":"${inTime.headers.get("x-request-id")}"}`,
    ]);
    advanceForTest(p, 1500);
    expect(answer(await raw(url(), bearer(token)))).toEqual([401, '{\n    "message": "Token has expired"\n}']);
  });

  it("the protected 200 is the app's envelope, request_id = X-Request-Id; validation is a compact 422", async () => {
    const ok = await raw(url(), bearer(token));
    expect(ok.status).toBe(200);
    expect(ok.body).toBe(`{"success":true,"data":{"merchant_id":1,"operation":"payment.status"},"request_id":"${ok.headers.get("x-request-id")}"}`);
    const both = await raw(`${p.url}/api/v2/auth/token`, postJson({}));
    expect([both.status, both.body]).toEqual([
      422,
      '{"message":"The api key field is required. (and 1 more error)","errors":{"api_key":["The api key field is required."],"api_secret":["The api secret field is required."]}}',
    ]);
    const get = await raw(`${p.url}/api/v2/auth/token`);
    expect([get.status, get.headers.get("allow"), get.body]).toEqual([
      405,
      "POST",
      '{\n    "message": "The GET method is not supported for route api/v2/auth/token. Supported methods: POST."\n}',
    ]);
  });

  it("the token: {typ, alg} HS256, claims iss (the request URL, public origin), iat, exp, nbf, jti, sub, prv in that order, 60 minutes", () => {
    expect(decodePart(token, 0)).toBe('{"typ":"JWT","alg":"HS256"}');
    const claims = JSON.parse(decodePart(token, 1)) as Record<string, unknown>;
    expect(Object.keys(claims)).toEqual(["iss", "iat", "exp", "nbf", "jti", "sub", "prv"]);
    expect(claims.iss).toBe("https://api.laravel-provider.test/api/v2/auth/token");
    expect(claims.jti).toMatch(/^[A-Za-z0-9]{16}$/);
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
  });
});
