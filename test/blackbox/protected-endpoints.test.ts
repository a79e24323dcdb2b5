import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, exportSPKI, importJWK, jwtVerify, SignJWT, type JWK, type JWTPayload } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSandbox } from "../../src/app/sandbox.js";
import {
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  T0,
  postJson,
  problem,
  requestWithRepeatedHeaders,
  startTestServer,
  type Reply,
  type TestServer,
} from "../support/server.js";
import { challenge, REALM, ISSUER, AUDIENCE, RENEW_HINT } from "../support/expect.js";

/**
 * Black-box tests of the protected groups `/api/v2/payment/*` and `/api/v2/cashout/*`
 * (DESIGN.md "Access token (JWT)" and "Protected groups", RFC 6750): real HTTP against the real
 * node:http server, sandbox clock frozen at T0 and moved, never slept on.
 */

const NOTE = "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.";
const T0_SECONDS = T0 / 1000;
/** T0 + 3600 s, the default expiry of a token issued at T0. */
const EXP_AT_T0 = "2026-01-01T01:00:00.000Z";
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/;

// ---------------------------------------------------------------------------------------------
// helpers

function bearer(token: string): RequestInit {
  return { headers: { authorization: `Bearer ${token}` } };
}

interface ExpectedProblem {
  status: 400 | 401 | 403;
  code: string;
  description: string;
  path: string;
  /** The OAuth error; omitted only for "no credentials at all". */
  error?: "invalid_request" | "invalid_token" | "insufficient_scope";
  scope?: string;
}

const TITLES = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden" } as const;

/** Plain view of a reply's headers, whichever client produced it. */
type HeaderMap = Record<string, string>;

function headersOf(reply: Reply): HeaderMap {
  const out: HeaderMap = {};
  reply.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** No JWT (the given ones, or anything shaped like one) in the body or any header. */
function expectNoJwt(text: string, headers: HeaderMap, tokens: string[] = []): void {
  expect(text).not.toMatch(JWT_PATTERN);
  for (const [name, value] of Object.entries(headers)) {
    expect(value, `header ${name}`).not.toMatch(JWT_PATTERN);
  }
  for (const token of tokens) {
    // Every dot-separated part of the token that is long enough to be recognisable.
    for (const part of [token, ...token.split(".").filter((p) => p.length >= 16)]) {
      expect(text).not.toContain(part);
      for (const value of Object.values(headers)) expect(value).not.toContain(part);
    }
  }
}

function expectProblemParts(status: number, text: string, json: unknown, headers: HeaderMap, p: ExpectedProblem, tokens: string[]) {
  expect({ status, json }).toEqual({
    status: p.status,
    json: problem(p.status, TITLES[p.status], p.code, p.description, p.path, p.error),
  });
  expect(headers["content-type"]).toBe("application/problem+json");
  expect(headers["cache-control"]).toBe("no-store");
  expect(headers["www-authenticate"]).toBe(p.error ? challenge(p.error, p.description, p.scope) : `Bearer realm="${REALM}"`);
  expectNoJwt(text, headers, tokens);
}

/** Exact status, content-type, cache-control, WWW-Authenticate and body of a refusal. */
function expectProblem(reply: Reply, p: ExpectedProblem, tokens: string[] = []): void {
  expectProblemParts(reply.status, reply.text, reply.json, headersOf(reply), p, tokens);
}

function invalidToken(code: string, description: string, path = "/api/v2/payment/x"): ExpectedProblem {
  return { status: 401, error: "invalid_token", code, description, path };
}

function invalidRequest(code: string, description: string, path = "/api/v2/payment/x"): ExpectedProblem {
  return { status: 400, error: "invalid_request", code, description, path };
}

/** The placeholder a valid call gets. */
function placeholder(method: string, path: string, scope: "payment" | "cashout", token: string, merchantId = DEFAULT_MERCHANT_ID) {
  const claims = decodeJwt(token);
  return {
    sandbox: true,
    merchant_id: merchantId,
    operation: `${method} ${path}`,
    scope,
    token_id: claims.jti,
    expires_at: new Date((claims.exp as number) * 1000).toISOString(),
    note: NOTE,
  };
}

function expectOk(reply: Reply, method: string, path: string, scope: "payment" | "cashout", token: string, merchantId?: string): void {
  expect({ status: reply.status, json: reply.json }).toEqual({
    status: 200,
    json: placeholder(method, path, scope, token, merchantId),
  });
  expect(reply.headers.get("content-type")).toBe("application/json");
  expect(reply.headers.get("cache-control")).toBe("no-store");
  expect(reply.headers.get("www-authenticate")).toBeNull();
}

function b64url(value: unknown): string {
  return Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
}

/** Access-token claims as the sandbox issues them, at `now` seconds, for the default merchant. */
function accessClaims(now: number, overrides: Record<string, unknown> = {}): JWTPayload {
  return {
    iss: ISSUER,
    sub: DEFAULT_MERCHANT_ID,
    aud: AUDIENCE,
    iat: now,
    exp: now + 3600,
    jti: `forged-${Math.random().toString(36).slice(2)}`,
    client_id: "sandbox-api-key",
    scope: "payment cashout",
    ...overrides,
  };
}

/** A token signed with the sandbox's own current signing key, with chosen header and claims. */
async function signWithSandboxKey(
  srv: TestServer,
  options: { claims?: Record<string, unknown>; header?: Record<string, unknown>; omitKid?: boolean } = {},
): Promise<string> {
  const key = srv.sandbox.keys.signing;
  const header: Record<string, unknown> = { alg: key.alg, kid: key.kid, typ: "at+jwt", ...options.header };
  if (options.omitKid) delete header.kid;
  return new SignJWT(accessClaims(srv.sandbox.clock.nowSeconds(), options.claims)).setProtectedHeader(header as { alg: string }).sign(key.privateKey);
}

// ---------------------------------------------------------------------------------------------

describe("protected groups with the default settings (RS256, no leeway)", () => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    await srv.close();
  });
  beforeEach(() => {
    srv.sandbox.clock.set(T0);
  });

  describe("a valid access token is accepted and answered with the placeholder", () => {
    const cases: Array<[string, string, "payment" | "cashout"]> = [];
    for (const method of ["GET", "POST", "PUT", "DELETE"]) {
      cases.push([method, "/api/v2/payment/anything", "payment"]);
      cases.push([method, "/api/v2/cashout/anything", "cashout"]);
    }
    cases.push(["GET", "/api/v2/payment", "payment"]);

    it.each(cases)("%s %s → 200 with the placeholder naming merchant, operation and scope", async (method, path, scope) => {
      const token = await srv.token();
      const init: RequestInit = { method, headers: { authorization: `Bearer ${token}` } };
      if (method === "POST" || method === "PUT") {
        init.body = JSON.stringify({ amount: 1000 });
        (init.headers as Record<string, string>)["content-type"] = "application/json";
      }
      const r = await srv.call(path, init);
      expectOk(r, method, path, scope, token);
    });

    it("the placeholder's token_id is the token's jti and expires_at is T0 + 3600 s", async () => {
      const token = await srv.token();
      const claims = decodeJwt(token);
      const r = await srv.call("/api/v2/payment/anything", bearer(token));
      expect(r.status).toBe(200);
      expect(typeof claims.jti).toBe("string");
      expect(r.json.token_id).toBe(claims.jti);
      expect(claims.iat).toBe(T0_SECONDS);
      expect(claims.exp).toBe(T0_SECONDS + 3600);
      expect(r.json).toEqual({
        sandbox: true,
        merchant_id: DEFAULT_MERCHANT_ID,
        operation: "GET /api/v2/payment/anything",
        scope: "payment",
        token_id: claims.jti,
        expires_at: EXP_AT_T0,
        note: NOTE,
      });
    });

    it("the scheme name is case-insensitive: lowercase `bearer` is accepted", async () => {
      const token = await srv.token();
      const r = await srv.call("/api/v2/cashout/anything", { headers: { authorization: `bearer ${token}` } });
      expectOk(r, "GET", "/api/v2/cashout/anything", "cashout", token);
    });
  });

  describe("RFC 6750 request errors", () => {
    it("no Authorization header → 401 with a bare challenge and no error member", async () => {
      const r = await srv.call("/api/v2/payment/x");
      expectProblem(r, {
        status: 401,
        code: "credentials_missing",
        description: "No credentials were sent. Send the access token as 'Authorization: Bearer <token>' (get one from POST /api/v2/auth/token).",
        path: "/api/v2/payment/x",
      });
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="merchant-api"');
      expect(r.json).not.toHaveProperty("error");
    });

    it("no Authorization header on the cashout group → the same bare 401", async () => {
      const r = await srv.call("/api/v2/cashout/x", { method: "POST" });
      expectProblem(r, {
        status: 401,
        code: "credentials_missing",
        description: "No credentials were sent. Send the access token as 'Authorization: Bearer <token>' (get one from POST /api/v2/auth/token).",
        path: "/api/v2/cashout/x",
      });
    });

    it("another scheme (`Basic abc`) → 400 invalid_request authorization_not_bearer", async () => {
      const r = await srv.call("/api/v2/payment/x", { headers: { authorization: "Basic abc" } });
      expectProblem(
        r,
        invalidRequest(
          "authorization_not_bearer",
          "The Authorization header uses 'Basic', not the Bearer scheme. Send 'Authorization: Bearer <token>' with the access token.",
        ),
      );
    });

    it.each(["Bearer", "Bearer   "])("`Bearer` with no token (%j) → 400 invalid_request bearer_token_empty", async (value) => {
      const r = await srv.call("/api/v2/payment/x", { headers: { authorization: value } });
      expectProblem(
        r,
        invalidRequest(
          "bearer_token_empty",
          "The Authorization header says Bearer but carries no token. Send 'Authorization: Bearer <token>' with the access token.",
        ),
      );
    });

    it.each([
      "Bearer a b",
      'Bearer abc"def',
      "Bearer abc'def",
      "Bearer a,b",
    ])("a token outside token68 (%j) → 400 invalid_request bearer_token_malformed", async (value) => {
      const r = await srv.call("/api/v2/payment/x", { headers: { authorization: value } });
      expectProblem(
        r,
        invalidRequest(
          "bearer_token_malformed",
          "The bearer token contains characters a token cannot have (spaces, quotes or others outside RFC 6750's token68). Send the access token exactly as issued, with one space after 'Bearer'.",
        ),
      );
    });

    it("two Authorization headers (even both valid) → 400 invalid_request authorization_header_repeated", async () => {
      const token = await srv.token();
      const r = await requestWithRepeatedHeaders(srv.url, "/api/v2/payment/x", {
        authorization: [`Bearer ${token}`, `Bearer ${token}`],
      });
      expectProblemParts(
        r.status,
        r.text,
        r.json,
        headersOf(r),
        invalidRequest(
          "authorization_header_repeated",
          "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
        ),
        [token],
      );
    });

    it("two different Authorization headers → 400 authorization_header_repeated (not merged into one value)", async () => {
      const token = await srv.token();
      const r = await requestWithRepeatedHeaders(srv.url, "/api/v2/cashout/x", {
        authorization: [`Bearer ${token}`, "Basic abc"],
      });
      expectProblemParts(
        r.status,
        r.text,
        r.json,
        headersOf(r),
        invalidRequest(
          "authorization_header_repeated",
          "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
          "/api/v2/cashout/x",
        ),
        [token],
      );
    });

    it("a token in the query string (?access_token=) → 400 token_in_query, and the token is not echoed", async () => {
      const token = await srv.token();
      const r = await srv.call(`/api/v2/payment/x?access_token=${token}`);
      expectProblem(
        r,
        invalidRequest(
          "token_in_query",
          "A token was sent in the query string ('access_token='), where it ends up in logs and browser history. Remove it from the URL and send it as 'Authorization: Bearer <token>'.",
        ),
        [token],
      );
      expect(r.text).not.toContain(token);
    });

    it("a token in the query string is refused even alongside a valid Authorization header", async () => {
      const token = await srv.token();
      const r = await srv.call(`/api/v2/cashout/x?amount=5&access_token=${token}`, bearer(token));
      expectProblem(
        r,
        invalidRequest(
          "token_in_query",
          "A token was sent in the query string ('access_token='), where it ends up in logs and browser history. Remove it from the URL and send it as 'Authorization: Bearer <token>'.",
          "/api/v2/cashout/x",
        ),
        [token],
      );
    });
  });

  describe("expiry on the sandbox clock", () => {
    it("at exp (T0 + 3600 s) the token is refused as token_expired, with times from T0", async () => {
      const token = await srv.token();
      srv.sandbox.clock.advance(3600_000);
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(
        r,
        invalidToken(
          "token_expired",
          `The access token expired at ${EXP_AT_T0} (sandbox time is now 2026-01-01T01:00:00.000Z). Renew it before it expires: ${RENEW_HINT}`,
        ),
        [token],
      );
    });

    it("one second before exp the token is still accepted", async () => {
      const token = await srv.token();
      srv.sandbox.clock.advance(3599_000);
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectOk(r, "GET", "/api/v2/payment/x", "payment", token);
    });
  });

  describe("tampered and malformed tokens", () => {
    it("a changed claim with the original signature → token_signature_invalid", async () => {
      const token = await srv.token();
      const [h, p, s] = token.split(".") as [string, string, string];
      const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
      const forged = `${h}.${b64url({ ...claims, exp: claims.exp + 86_400 })}.${s}`;
      const r = await srv.call("/api/v2/payment/x", bearer(forged));
      expectProblem(
        r,
        invalidToken(
          "token_signature_invalid",
          `The token's signature does not verify: it was altered after it was issued, or signed with another key. ${RENEW_HINT}`,
        ),
        [token, forged],
      );
    });

    it("a changed subject (another merchant) with the original signature → token_signature_invalid", async () => {
      const token = await srv.token();
      const [h, p, s] = token.split(".") as [string, string, string];
      const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
      const forged = `${h}.${b64url({ ...claims, sub: "someone_else", scope: "payment cashout admin" })}.${s}`;
      const r = await srv.call("/api/v2/cashout/x", bearer(forged));
      expectProblem(
        r,
        invalidToken(
          "token_signature_invalid",
          `The token's signature does not verify: it was altered after it was issued, or signed with another key. ${RENEW_HINT}`,
          "/api/v2/cashout/x",
        ),
        [token, forged],
      );
    });

    it("a signature truncated to a shorter valid base64url (8 chars off) → 401 token_signature_invalid", async () => {
      const token = await srv.token();
      const truncated = token.slice(0, -8);
      const r = await srv.call("/api/v2/payment/x", bearer(truncated));
      expectProblem(
        r,
        invalidToken(
          "token_signature_invalid",
          `The token's signature does not verify: it was altered after it was issued, or signed with another key. ${RENEW_HINT}`,
        ),
        [token, truncated],
      );
    });

    it("a signature cut to invalid base64url length (1 char off) → 401 token_malformed", async () => {
      const token = await srv.token();
      const truncated = token.slice(0, -1);
      const r = await srv.call("/api/v2/payment/x", bearer(truncated));
      expectProblem(
        r,
        invalidToken(
          "token_malformed",
          "The token is not a well-formed signed JWT. Send the access_token value from POST /api/v2/auth/token unchanged.",
        ),
        [token, truncated],
      );
    });

    it("a signature removed entirely (header.payload.) → 401 token_signature_invalid", async () => {
      const token = await srv.token();
      const stripped = token.slice(0, token.lastIndexOf(".") + 1);
      const r = await srv.call("/api/v2/payment/x", bearer(stripped));
      expectProblem(
        r,
        invalidToken(
          "token_signature_invalid",
          `The token's signature does not verify: it was altered after it was issued, or signed with another key. ${RENEW_HINT}`,
        ),
        [token, stripped],
      );
    });

    it("`abc` → 401 token_malformed", async () => {
      const r = await srv.call("/api/v2/payment/x", bearer("abc"));
      expectProblem(
        r,
        invalidToken(
          "token_malformed",
          "The bearer token is not a JWT (expected three base64url parts separated by dots). Send the access_token value from POST /api/v2/auth/token unchanged.",
        ),
      );
    });

    it("a header that is not base64url JSON → 401 token_malformed", async () => {
      const bad = `${b64url("not json")}.${b64url({ sub: "x" })}.sig`;
      const r = await srv.call("/api/v2/payment/x", bearer(bad));
      expectProblem(
        r,
        invalidToken(
          "token_malformed",
          "The token's header is not valid base64url-encoded JSON. Send the access_token value from POST /api/v2/auth/token unchanged.",
        ),
      );
    });

    it("a JWE-looking 5-part token → 401 token_encrypted", async () => {
      const jwe = `${b64url({ alg: "RSA-OAEP-256", enc: "A256GCM", kid: "k" })}.ZW5jcnlwdGVka2V5.aXZpdml2aXY.Y2lwaGVydGV4dA.dGFndGFn`;
      const r = await srv.call("/api/v2/payment/x", bearer(jwe));
      expectProblem(
        r,
        invalidToken(
          "token_encrypted",
          "The token is an encrypted JWT (JWE); this API accepts only the signed access token (JWS) from POST /api/v2/auth/token.",
        ),
        [jwe],
      );
    });
  });

  describe("the algorithm is never taken from the token", () => {
    it.each(["none", "None", "NONE"])("alg %j with an empty signature → token_algorithm_rejected", async (alg) => {
      const kid = srv.sandbox.keys.signing.kid;
      const unsigned = `${b64url({ alg, typ: "at+jwt", kid })}.${b64url(accessClaims(T0_SECONDS))}.`;
      const r = await srv.call("/api/v2/cashout/x", bearer(unsigned));
      expectProblem(
        r,
        invalidToken(
          "token_algorithm_rejected",
          `The token's algorithm '${alg}' is not accepted; this sandbox signs and accepts RS256 only. Use the access token exactly as issued by POST /api/v2/auth/token.`,
          "/api/v2/cashout/x",
        ),
        [unsigned],
      );
    });

    it("key confusion: HS256 signed with the RSA public key's SPKI bytes → token_algorithm_rejected", async () => {
      // The public key as any attacker can get it: from the JWKS document.
      const jwks = await srv.call("/.well-known/jwks.json");
      expect(jwks.status).toBe(200);
      const kid = srv.sandbox.keys.signing.kid;
      const jwk = (jwks.json.keys as JWK[]).find((k) => k.kid === kid)!;
      expect(jwk).toMatchObject({ kty: "RSA", kid, alg: "RS256", use: "sig" });
      const publicKey = await importJWK(jwk, "RS256", { extractable: true });
      const pem = await exportSPKI(publicKey as CryptoKey);
      expect(pem).toContain("-----BEGIN PUBLIC KEY-----");
      const forged = await new SignJWT(accessClaims(T0_SECONDS))
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid })
        .sign(new TextEncoder().encode(pem));
      const r = await srv.call("/api/v2/payment/x", bearer(forged));
      expectProblem(
        r,
        invalidToken(
          "token_algorithm_rejected",
          "The token's algorithm 'HS256' is not accepted; this sandbox signs and accepts RS256 only. Use the access token exactly as issued by POST /api/v2/auth/token.",
        ),
        [forged],
      );
    });

    it("key confusion with the sandbox's own verify key exported directly → token_algorithm_rejected", async () => {
      // A WebCrypto public key is always extractable, even from a non-extractable key pair.
      const pem = await exportSPKI(srv.sandbox.keys.signing.verifyKey as CryptoKey);
      const forged = await new SignJWT(accessClaims(T0_SECONDS))
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid: srv.sandbox.keys.signing.kid })
        .sign(new TextEncoder().encode(pem));
      const r = await srv.call("/api/v2/payment/x", bearer(forged));
      expect(r.status).toBe(401);
      expect(r.json.code).toBe("token_algorithm_rejected");
    });
  });

  describe("claims and header checks on a correctly signed token", () => {
    it("a control: the forging helper's own token, with every claim right, is accepted", async () => {
      const token = await signWithSandboxKey(srv);
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectOk(r, "GET", "/api/v2/payment/x", "payment", token);
    });

    it("another issuer → token_wrong_issuer", async () => {
      const token = await signWithSandboxKey(srv, { claims: { iss: "https://evil.example" } });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(
        r,
        invalidToken(
          "token_wrong_issuer",
          `The token was issued by 'https://evil.example', not by this sandbox ('https://merchant-sandbox.test'). ${RENEW_HINT}`,
        ),
        [token],
      );
    });

    it("another audience → token_wrong_audience", async () => {
      const token = await signWithSandboxKey(srv, { claims: { aud: "other-api" } });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(r, invalidToken("token_wrong_audience", `The token is meant for audience 'other-api', not 'merchant-api'. ${RENEW_HINT}`), [
        token,
      ]);
    });

    it("an audience array that includes merchant-api is accepted", async () => {
      const token = await signWithSandboxKey(srv, { claims: { aud: ["other-api", AUDIENCE] } });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectOk(r, "GET", "/api/v2/payment/x", "payment", token);
    });

    it("typ `JWT` (the login's type) → token_not_access_token with the login-specific message", async () => {
      const token = await signWithSandboxKey(srv, { header: { typ: "JWT" } });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(
        r,
        invalidToken(
          "token_not_access_token",
          "This token comes from the deprecated POST /api/login_check; payment and cashout endpoints accept only access tokens. Exchange api_key and api_secret at POST /api/v2/auth/token and send that access_token.",
        ),
        [token],
      );
    });

    it("another typ (`JOSE`) → token_not_access_token naming the type", async () => {
      const token = await signWithSandboxKey(srv, { header: { typ: "JOSE" } });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(r, invalidToken("token_not_access_token", `The token's type (typ 'JOSE') is not an access token (at+jwt). ${RENEW_HINT}`), [
        token,
      ]);
    });

    it("no kid header → token_kid_missing", async () => {
      const token = await signWithSandboxKey(srv, { omitKid: true });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(r, invalidToken("token_kid_missing", `The token has no 'kid' header, so no key can verify it. ${RENEW_HINT}`), [token]);
    });

    it("iat in the future (beyond the 0 s leeway) → token_not_yet_valid", async () => {
      const token = await signWithSandboxKey(srv, { claims: { iat: T0_SECONDS + 60, exp: T0_SECONDS + 3660 } });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(
        r,
        invalidToken(
          "token_not_yet_valid",
          "The token says it was issued at 2026-01-01T00:01:00.000Z, after the sandbox's current time 2026-01-01T00:00:00.000Z. Check the clocks, then request a new access token from POST /api/v2/auth/token.",
        ),
        [token],
      );
    });

    it("nbf in the future → token_not_yet_valid", async () => {
      const token = await signWithSandboxKey(srv, { claims: { nbf: T0_SECONDS + 60 } });
      const r = await srv.call("/api/v2/payment/x", bearer(token));
      expectProblem(
        r,
        invalidToken(
          "token_not_yet_valid",
          "The token is not valid before 2026-01-01T00:01:00.000Z (sandbox time is now 2026-01-01T00:00:00.000Z). Check the clocks, then request a new access token from POST /api/v2/auth/token.",
        ),
        [token],
      );
    });
  });

  describe("the wrong kind of token", () => {
    it("the merchant payment token as bearer → 401 payment_token_not_accepted", async () => {
      const r = await srv.call("/api/v2/payment/x", bearer(DEFAULT_PAYMENT_TOKEN));
      expectProblem(
        r,
        invalidToken(
          "payment_token_not_accepted",
          "This is a merchant payment token; it only authorises POST /api/v2/payment/init. Payment and cashout endpoints need the access token (JWT) from POST /api/v2/auth/token.",
        ),
      );
      expect(r.text).not.toContain(DEFAULT_PAYMENT_TOKEN);
      expect(r.headers.get("www-authenticate")).not.toContain(DEFAULT_PAYMENT_TOKEN);
    });

    it("the deprecated login's token → 401 token_not_access_token with the login-specific message", async () => {
      const login = await srv.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
      expect(login.status).toBe(200);
      const loginToken = login.json.token as string;
      expect(typeof loginToken).toBe("string");
      const r = await srv.call("/api/v2/payment/x", bearer(loginToken));
      expectProblem(
        r,
        invalidToken(
          "token_not_access_token",
          "This token comes from the deprecated POST /api/login_check; payment and cashout endpoints accept only access tokens. Exchange api_key and api_secret at POST /api/v2/auth/token and send that access_token.",
        ),
        [loginToken],
      );
    });

    it("a token from another sandbox in the same process (another key) → 401 token_unknown_kid", async () => {
      const other = await createSandbox({ frozenAt: T0 });
      const issued = await other.handle({
        method: "POST",
        path: "/api/v2/auth/token",
        query: "",
        headers: { "content-type": "application/json" },
        body: new TextEncoder().encode(JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" })),
      });
      expect(issued.status).toBe(200);
      const foreign = JSON.parse(issued.body).access_token as string;
      expect(other.keys.signing.kid).not.toBe(srv.sandbox.keys.signing.kid);
      const r = await srv.call("/api/v2/payment/x", bearer(foreign));
      expectProblem(
        r,
        invalidToken(
          "token_unknown_kid",
          `The token's signing key (kid '${other.keys.signing.kid}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`,
        ),
        [foreign],
      );
    });
  });
});

describe("leeway setting (30 s) widens the expiry and issued-at checks by exactly that much", () => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer({ leeway: "30s" });
  });
  afterAll(async () => {
    await srv.close();
  });
  beforeEach(() => {
    srv.sandbox.clock.set(T0);
  });

  it("20 s past exp the token still works", async () => {
    const token = await srv.token();
    srv.sandbox.clock.advance(3620_000);
    const r = await srv.call("/api/v2/payment/x", bearer(token));
    expectOk(r, "GET", "/api/v2/payment/x", "payment", token);
  });

  it("30 s past exp the token is expired (exp ≤ now − leeway)", async () => {
    const token = await srv.token();
    srv.sandbox.clock.advance(3630_000);
    const r = await srv.call("/api/v2/payment/x", bearer(token));
    expect(r.status).toBe(401);
    expect(r.json.code).toBe("token_expired");
  });

  it("31 s past exp the token is refused as token_expired", async () => {
    const token = await srv.token();
    srv.sandbox.clock.advance(3631_000);
    const r = await srv.call("/api/v2/payment/x", bearer(token));
    expectProblem(
      r,
      invalidToken(
        "token_expired",
        `The access token expired at ${EXP_AT_T0} (sandbox time is now 2026-01-01T01:00:31.000Z). Renew it before it expires: ${RENEW_HINT}`,
      ),
      [token],
    );
  });

  it("iat 20 s in the future is tolerated, 31 s is not", async () => {
    const ok = await signWithSandboxKey(srv, { claims: { iat: T0_SECONDS + 20, exp: T0_SECONDS + 3620 } });
    expectOk(await srv.call("/api/v2/payment/x", bearer(ok)), "GET", "/api/v2/payment/x", "payment", ok);
    const late = await signWithSandboxKey(srv, { claims: { iat: T0_SECONDS + 31, exp: T0_SECONDS + 3631 } });
    expectProblem(
      await srv.call("/api/v2/payment/x", bearer(late)),
      invalidToken(
        "token_not_yet_valid",
        "The token says it was issued at 2026-01-01T00:00:31.000Z, after the sandbox's current time 2026-01-01T00:00:00.000Z. Check the clocks, then request a new access token from POST /api/v2/auth/token.",
      ),
      [late],
    );
  });
});

describe("revocation through the token ledger", () => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    await srv.close();
  });

  it("a token revoked by jti → 401 token_revoked; another token of the same merchant still works", async () => {
    const revoked = await srv.token();
    const other = await srv.token();
    srv.sandbox.ledger.revoke(decodeJwt(revoked).jti!);
    const r = await srv.call("/api/v2/payment/x", bearer(revoked));
    expectProblem(r, invalidToken("token_revoked", `The access token was revoked. ${RENEW_HINT}`), [revoked]);
    expectOk(await srv.call("/api/v2/payment/x", bearer(other)), "GET", "/api/v2/payment/x", "payment", other);
  });

  it("revokeAllOf(merchant, now) revokes the tokens issued so far; tokens issued afterwards are accepted", async () => {
    const old = await srv.token();
    srv.sandbox.ledger.revokeAllOf(DEFAULT_MERCHANT_ID, srv.sandbox.clock.nowSeconds());
    expectProblem(
      await srv.call("/api/v2/cashout/x", bearer(old)),
      invalidToken("token_revoked", `The access token was revoked. ${RENEW_HINT}`, "/api/v2/cashout/x"),
      [old],
    );
    // Issued after the cut-off in the same (frozen) second: not revoked. The cut-off is by issue
    // order, so a client that renews right after a revocation gets a working token.
    const sameSecond = await srv.token();
    expect((await srv.call("/api/v2/cashout/x", bearer(sameSecond))).status).toBe(200);

    srv.sandbox.clock.advance(1000);
    const fresh = await srv.token();
    expectOk(await srv.call("/api/v2/cashout/x", bearer(fresh)), "GET", "/api/v2/cashout/x", "cashout", fresh);
    // The old one stays revoked.
    expect((await srv.call("/api/v2/cashout/x", bearer(old))).json.code).toBe("token_revoked");
  });
});

describe("key rotation without keeping the old key", () => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    await srv.close();
  });

  it("rotate(false) → a token of the old key is token_unknown_kid; a new token works", async () => {
    const old = await srv.token();
    const oldKid = srv.sandbox.keys.signing.kid;
    await srv.sandbox.keys.rotate(false);
    expect(srv.sandbox.keys.signing.kid).not.toBe(oldKid);
    const r = await srv.call("/api/v2/payment/x", bearer(old));
    expectProblem(
      r,
      invalidToken(
        "token_unknown_kid",
        `The token's signing key (kid '${oldKid}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`,
      ),
      [old],
    );
    const fresh = await srv.token();
    expectOk(await srv.call("/api/v2/payment/x", bearer(fresh)), "GET", "/api/v2/payment/x", "payment", fresh);
    const jwks = await srv.call("/.well-known/jwks.json");
    expect((jwks.json.keys as JWK[]).map((k) => k.kid)).toEqual([srv.sandbox.keys.signing.kid]);
  });
});

describe("key rotation keeping the old key", () => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    await srv.close();
  });

  it("rotate(true) → a token of the old key is still accepted, and so is one of the new key", async () => {
    const old = await srv.token();
    const oldKid = srv.sandbox.keys.signing.kid;
    await srv.sandbox.keys.rotate(true);
    const newKid = srv.sandbox.keys.signing.kid;
    expect(newKid).not.toBe(oldKid);
    expectOk(await srv.call("/api/v2/payment/x", bearer(old)), "GET", "/api/v2/payment/x", "payment", old);
    const fresh = await srv.token();
    expect(decodeProtectedHeader(fresh).kid).toBe(newKid);
    expectOk(await srv.call("/api/v2/cashout/x", bearer(fresh)), "GET", "/api/v2/cashout/x", "cashout", fresh);
    const jwks = await srv.call("/.well-known/jwks.json");
    expect((jwks.json.keys as JWK[]).map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
  });
});

describe("scopes: a merchant without the cashout right", () => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer({
      merchants: [{ id: "m_pay_only", apiKey: "k1", apiSecret: "s1-secret-value", paymentToken: "pt1", scopes: ["payment"] }],
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  it("cashout → 403 insufficient_scope with error and scope in the challenge", async () => {
    const token = await srv.token("k1", "s1-secret-value");
    const r = await srv.call("/api/v2/cashout/transfer", { method: "POST", headers: { authorization: `Bearer ${token}` } });
    const description =
      "The access token of merchant 'm_pay_only' has no 'cashout' scope (it has: payment). This merchant is not allowed to use /api/v2/cashout/ endpoints; ask for the 'cashout' right or use a merchant that has it.";
    expectProblem(
      r,
      {
        status: 403,
        error: "insufficient_scope",
        code: "insufficient_scope",
        description,
        path: "/api/v2/cashout/transfer",
        scope: "cashout",
      },
      [token],
    );
    const wwwAuthenticate = r.headers.get("www-authenticate")!;
    expect(wwwAuthenticate).toContain('error="insufficient_scope"');
    expect(wwwAuthenticate).toContain('scope="cashout"');
  });

  it("payment → 200 for the same token", async () => {
    const token = await srv.token("k1", "s1-secret-value");
    const r = await srv.call("/api/v2/payment/charge", { method: "POST", headers: { authorization: `Bearer ${token}` } });
    expectOk(r, "POST", "/api/v2/payment/charge", "payment", token, "m_pay_only");
  });
});

describe.each(["RS256", "ES256"] as const)("JWKS with %s: the published keys verify an issued access token", (algorithm) => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer({ algorithm });
  });
  afterAll(async () => {
    await srv.close();
  });

  it("GET /.well-known/jwks.json + createLocalJWKSet + jwtVerify accepts the token", async () => {
    const token = await srv.token();
    const r = await srv.call("/.well-known/jwks.json");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
    const keys = r.json.keys as JWK[];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kid: srv.sandbox.keys.signing.kid, alg: algorithm, use: "sig" });
    expect(keys[0]).not.toHaveProperty("d");
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(r.json), {
      issuer: ISSUER,
      audience: AUDIENCE,
      typ: "at+jwt",
      algorithms: [algorithm],
      currentDate: new Date(T0),
    });
    expect(protectedHeader).toEqual({ alg: algorithm, kid: srv.sandbox.keys.signing.kid, typ: "at+jwt" });
    expect(payload).toMatchObject({ sub: DEFAULT_MERCHANT_ID, iat: T0_SECONDS, exp: T0_SECONDS + 3600, scope: "payment cashout" });
  });

  it(`a ${algorithm} token is accepted by the protected groups`, async () => {
    const token = await srv.token();
    expectOk(await srv.call("/api/v2/cashout/x", bearer(token)), "GET", "/api/v2/cashout/x", "cashout", token);
  });

  it(`alg none is rejected naming ${algorithm} as the only accepted algorithm`, async () => {
    const unsigned = `${b64url({ alg: "none", typ: "at+jwt", kid: srv.sandbox.keys.signing.kid })}.${b64url(accessClaims(T0_SECONDS))}.`;
    expectProblem(
      await srv.call("/api/v2/payment/x", bearer(unsigned)),
      invalidToken(
        "token_algorithm_rejected",
        `The token's algorithm 'none' is not accepted; this sandbox signs and accepts ${algorithm} only. Use the access token exactly as issued by POST /api/v2/auth/token.`,
      ),
      [unsigned],
    );
  });
});

describe("JWKS with HS256: no public key is published", () => {
  let srv: TestServer;

  beforeAll(async () => {
    srv = await startTestServer({ algorithm: "HS256" });
  });
  afterAll(async () => {
    await srv.close();
  });

  it("the keys array is empty", async () => {
    const r = await srv.call("/.well-known/jwks.json");
    expect({ status: r.status, json: r.json }).toEqual({ status: 200, json: { keys: [] } });
  });

  it("an HS256 access token is accepted by the protected groups", async () => {
    const token = await srv.token();
    expectOk(await srv.call("/api/v2/payment/x", bearer(token)), "GET", "/api/v2/payment/x", "payment", token);
  });

  it("an RS256-labelled token is rejected on an HS256 sandbox → token_algorithm_rejected", async () => {
    const token = await srv.token();
    const [, p, s] = token.split(".") as [string, string, string];
    const relabelled = `${b64url({ alg: "RS256", typ: "at+jwt", kid: srv.sandbox.keys.signing.kid })}.${p}.${s}`;
    expectProblem(
      await srv.call("/api/v2/payment/x", bearer(relabelled)),
      invalidToken(
        "token_algorithm_rejected",
        "The token's algorithm 'RS256' is not accepted; this sandbox signs and accepts HS256 only. Use the access token exactly as issued by POST /api/v2/auth/token.",
      ),
      [token, relabelled],
    );
  });
});

describe("a merchant disabled after its token was issued", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("its tokens stop working at once: 401 merchant_disabled", async () => {
    const token = await t.token();
    expect((await t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    t.sandbox.merchants.byKey("sandbox-api-key")!.disabled = true;
    const r = await t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } });
    const description =
      "The merchant of this token ('merchant_sandbox_default') has been disabled since the token was issued; its tokens are no longer accepted. Use an active merchant's credentials.";
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe(`Bearer realm="merchant-api", error="invalid_token", error_description="${description}"`);
    expect(r.json).toEqual(problem(401, "Unauthorized", "merchant_disabled", description, "/api/v2/payment/x", "invalid_token"));
  });
});
