import { internalsOf } from "../../src/app/internals.js";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWK } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_MERCHANT_ID,
  T0,
  problem,
  requestWithRepeatedHeaders,
  rawGet,
  rawRequest,
  serverPerDescribe,
  type Reply,
} from "../support/server.js";
import { AUDIENCE, ISSUER, REALM, RENEW_HINT, bearer, challenge, expectProblem } from "../support/expect.js";

/**
 * Black-box tests of the protected groups `/api/v2/payment/*` and `/api/v2/cashout/*`
 * (docs/behaviour.md, "Access tokens" and the protected groups, RFC 6750): real HTTP against the real
 * node:http server, sandbox clock frozen at T0 and moved, never slept on.
 *
 * This file owns the RFC 6750 rules for the Authorization header (scheme, spacing, repeats, the
 * token in the query) and what an accepted token gets; the catalogue of forged, tampered and
 * malformed tokens (alg, keys, claims, typ, leeway) lives in forged-tokens.test.ts, once.
 */

const NOTE = "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.";
const T0_SECONDS = T0 / 1000;
/** T0 + 3600 s, the default expiry of a token issued at T0. */
const EXP_AT_T0 = "2026-01-01T01:00:00.000Z";

// ---------------------------------------------------------------------------------------------
// helpers

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

/**
 * Exact status, problem+json, no-store, body and WWW-Authenticate (the bare challenge when no
 * credentials were sent) of a refusal, echoing no JWT and none of `tokens`.
 */
function expectRefusal(reply: Reply, p: ExpectedProblem, tokens: string[] = []): void {
  expectProblem(reply, problem(p.status, TITLES[p.status], p.code, p.description, p.path, p.error), {
    headers: { "www-authenticate": p.error ? challenge(p.error, p.description, p.scope) : `Bearer realm="${REALM}"` },
    notEchoed: tokens,
  });
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

// ---------------------------------------------------------------------------------------------

describe("protected groups with the default settings (RS256, no leeway)", () => {
  const srv = serverPerDescribe();
  beforeEach(() => {
    srv().sandbox.clock.set(T0);
  });

  describe("a valid access token is accepted and answered with the placeholder", () => {
    const cases: Array<[string, string, "payment" | "cashout"]> = [];
    for (const method of ["GET", "POST", "PUT", "DELETE"]) {
      cases.push([method, "/api/v2/payment/anything", "payment"]);
      cases.push([method, "/api/v2/cashout/anything", "cashout"]);
    }
    cases.push(["GET", "/api/v2/payment", "payment"]);

    it.each(cases)("%s %s → 200 with the placeholder naming merchant, operation and scope", async (method, path, scope) => {
      const token = await srv().token();
      const init: RequestInit = { method, headers: { authorization: `Bearer ${token}` } };
      if (method === "POST" || method === "PUT") {
        init.body = JSON.stringify({ amount: 1000 });
        (init.headers as Record<string, string>)["content-type"] = "application/json";
      }
      const r = await srv().call(path, init);
      expectOk(r, method, path, scope, token);
    });

    it("the placeholder's token_id is the token's jti and expires_at is T0 + 3600 s", async () => {
      const token = await srv().token();
      const claims = decodeJwt(token);
      const r = await srv().call("/api/v2/payment/anything", bearer(token));
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

    it("the scheme name in capitals (`BEARER`) is accepted too", async () => {
      const token = await srv().token();
      const r = await srv().call("/api/v2/cashout/anything", { headers: { authorization: `BEARER ${token}` } });
      expectOk(r, "GET", "/api/v2/cashout/anything", "cashout", token);
    });

    it('two spaces after "Bearer" are accepted (RFC 6750 §2.1: "Bearer" 1*SP b64token)', async () => {
      const token = await srv().token();
      const r = await srv().call("/api/v2/payment/anything", { headers: { authorization: `Bearer  ${token}` } });
      expectOk(r, "GET", "/api/v2/payment/anything", "payment", token);
    });

    it("a trailing space after the token (sent raw, byte for byte) is accepted (trailing whitespace is not part of a field value)", async () => {
      const token = await srv().token();
      const r = await rawGet(srv(), "/api/v2/payment/anything", [`Authorization: Bearer ${token} `]);
      expectOk(r, "GET", "/api/v2/payment/anything", "payment", token);
    });

    it("the scheme name is case-insensitive: lowercase `bearer` is accepted", async () => {
      const token = await srv().token();
      const r = await srv().call("/api/v2/cashout/anything", { headers: { authorization: `bearer ${token}` } });
      expectOk(r, "GET", "/api/v2/cashout/anything", "cashout", token);
    });
  });

  describe("methods: the seven the document lists, and HEAD as GET", () => {
    it.each([
      "TRACE",
      "PROPFIND",
      "CONNECT",
    ])("regression (issue 13): %s with a valid token answered 200; now 405 method_not_allowed with Allow, before the token is read", async (method) => {
      const token = await srv().token();
      for (const path of ["/api/v2/payment/anything", "/api/v2/cashout/anything"]) {
        const r = await rawRequest(srv(), method, path, [`Authorization: Bearer ${token}`]);
        expect(r.status, path).toBe(405);
        expect(r.headers.get("allow")).toBe("GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS");
        expectProblem(
          r,
          problem(
            405,
            "Method Not Allowed",
            "method_not_allowed",
            `${method} is not allowed on ${path}. Use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS.`,
            path,
            "method_not_allowed",
          ),
        );
      }
    });

    it("regression (issue 13): HEAD's Content-Length was one byte more than GET's body ('HEAD' in the placeholder); now GET's own, and no body", async () => {
      const token = await srv().token();
      const get = await rawRequest(srv(), "GET", "/api/v2/payment/anything", [`Authorization: Bearer ${token}`]);
      const head = await rawRequest(srv(), "HEAD", "/api/v2/payment/anything", [`Authorization: Bearer ${token}`]);
      expect(get.status).toBe(200);
      expect(head.status).toBe(200);
      expect(head.text).toBe("");
      expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(get.text)));
      expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    });
  });

  describe("RFC 6750 request errors", () => {
    it("no Authorization header → 401 with a bare challenge and no error member", async () => {
      const r = await srv().call("/api/v2/payment/x");
      expectRefusal(r, {
        status: 401,
        code: "credentials_missing",
        description: "No credentials were sent. Send the access token as 'Authorization: Bearer <token>' (get one from POST /api/v2/auth/token).",
        path: "/api/v2/payment/x",
      });
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="merchant-api"');
      expect(r.json).not.toHaveProperty("error");
    });

    it("no Authorization header on the cashout group → the same bare 401", async () => {
      const r = await srv().call("/api/v2/cashout/x", { method: "POST" });
      expectRefusal(r, {
        status: 401,
        code: "credentials_missing",
        description: "No credentials were sent. Send the access token as 'Authorization: Bearer <token>' (get one from POST /api/v2/auth/token).",
        path: "/api/v2/cashout/x",
      });
    });

    it("another scheme (`Basic abc`) → 400 invalid_request authorization_not_bearer", async () => {
      const r = await srv().call("/api/v2/payment/x", { headers: { authorization: "Basic abc" } });
      expectRefusal(
        r,
        invalidRequest(
          "authorization_not_bearer",
          "The Authorization header uses 'Basic', not the Bearer scheme. Send 'Authorization: Bearer <token>' with the access token.",
        ),
      );
    });

    it('a tab instead of the space after "Bearer" (sent raw) → 400 invalid_request authorization_not_bearer', async () => {
      const token = await srv().token();
      const r = await rawGet(srv(), "/api/v2/payment/x", [`Authorization: Bearer\t${token}`]);
      // Regression test: this used to say the header had "no recognisable scheme".
      expectRefusal(
        r,
        invalidRequest(
          "authorization_not_bearer",
          "The Authorization header has the Bearer scheme but not a single space after it. Send 'Authorization: Bearer <token>' with the access token.",
        ),
        [token],
      );
    });

    it.each(["Bearer", "Bearer   "])("`Bearer` with no token (%j) → 400 invalid_request bearer_token_empty", async (value) => {
      const r = await srv().call("/api/v2/payment/x", { headers: { authorization: value } });
      expectRefusal(
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
      const r = await srv().call("/api/v2/payment/x", { headers: { authorization: value } });
      expectRefusal(
        r,
        invalidRequest(
          "bearer_token_malformed",
          "The bearer token contains characters a token cannot have (spaces, quotes or others outside RFC 6750's token68). Send the access token exactly as issued, with one space after 'Bearer'.",
        ),
      );
    });

    it("two Authorization headers (even both valid) → 400 invalid_request authorization_header_repeated", async () => {
      const token = await srv().token();
      const r = await requestWithRepeatedHeaders(srv().url, "/api/v2/payment/x", {
        authorization: [`Bearer ${token}`, `Bearer ${token}`],
      });
      expectRefusal(
        r,
        invalidRequest(
          "authorization_header_repeated",
          "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
        ),
        [token],
      );
    });

    it("two different Authorization headers → 400 authorization_header_repeated (not merged into one value)", async () => {
      const token = await srv().token();
      const r = await requestWithRepeatedHeaders(srv().url, "/api/v2/cashout/x", {
        authorization: [`Bearer ${token}`, "Basic abc"],
      });
      expectRefusal(
        r,
        invalidRequest(
          "authorization_header_repeated",
          "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
          "/api/v2/cashout/x",
        ),
        [token],
      );
    });

    it("two Authorization headers written raw (the same token twice, the name in two casings) → 400 authorization_header_repeated", async () => {
      const token = await srv().token();
      const r = await rawGet(srv(), "/api/v2/cashout/x", [`Authorization: Bearer ${token}`, `authorization: Bearer ${token}`]);
      expectRefusal(
        r,
        invalidRequest(
          "authorization_header_repeated",
          "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
          "/api/v2/cashout/x",
        ),
        [token],
      );
    });

    it("a token in the query string (?access_token=) → 400 token_in_query, and the token is not echoed", async () => {
      const token = await srv().token();
      const r = await srv().call(`/api/v2/payment/x?access_token=${token}`);
      expectRefusal(
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
      const token = await srv().token();
      const r = await srv().call(`/api/v2/cashout/x?amount=5&access_token=${token}`, bearer(token));
      expectRefusal(
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
    it("one second before exp the token is still accepted", async () => {
      const token = await srv().token();
      srv().sandbox.clock.advance(3599_000);
      const r = await srv().call("/api/v2/payment/x", bearer(token));
      expectOk(r, "GET", "/api/v2/payment/x", "payment", token);
    });
  });
});

describe("revocation through the token ledger", () => {
  const srv = serverPerDescribe();

  it("a token revoked by jti → 401 token_revoked; another token of the same merchant still works", async () => {
    const revoked = await srv().token();
    const other = await srv().token();
    internalsOf(srv().sandbox).ledger.revoke(decodeJwt(revoked).jti!);
    const r = await srv().call("/api/v2/payment/x", bearer(revoked));
    expectRefusal(r, invalidToken("token_revoked", `The access token was revoked. ${RENEW_HINT}`), [revoked]);
    expectOk(await srv().call("/api/v2/payment/x", bearer(other)), "GET", "/api/v2/payment/x", "payment", other);
  });

  it("revokeAllOf(merchant, now) revokes the tokens issued so far; tokens issued afterwards are accepted", async () => {
    const old = await srv().token();
    internalsOf(srv().sandbox).ledger.revokeAllOf(DEFAULT_MERCHANT_ID, srv().sandbox.clock.nowSeconds());
    expectRefusal(
      await srv().call("/api/v2/cashout/x", bearer(old)),
      invalidToken("token_revoked", `The access token was revoked. ${RENEW_HINT}`, "/api/v2/cashout/x"),
      [old],
    );
    // Issued after the cut-off in the same (frozen) second: not revoked. The cut-off is by issue
    // order, so a client that renews right after a revocation gets a working token.
    const sameSecond = await srv().token();
    expect((await srv().call("/api/v2/cashout/x", bearer(sameSecond))).status).toBe(200);

    srv().sandbox.clock.advance(1000);
    const fresh = await srv().token();
    expectOk(await srv().call("/api/v2/cashout/x", bearer(fresh)), "GET", "/api/v2/cashout/x", "cashout", fresh);
    // The old one stays revoked.
    expect((await srv().call("/api/v2/cashout/x", bearer(old))).json.code).toBe("token_revoked");
  });
});

describe("key rotation without keeping the old key", () => {
  const srv = serverPerDescribe();

  it("rotate(false) → a token of the old key is token_unknown_kid; a new token works", async () => {
    const old = await srv().token();
    const oldKid = srv().sandbox.keys.signing.kid;
    await srv().sandbox.keys.rotate(false);
    expect(srv().sandbox.keys.signing.kid).not.toBe(oldKid);
    const r = await srv().call("/api/v2/payment/x", bearer(old));
    expectRefusal(
      r,
      invalidToken(
        "token_unknown_kid",
        `The token's signing key (kid '${oldKid}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`,
      ),
      [old],
    );
    const fresh = await srv().token();
    expectOk(await srv().call("/api/v2/payment/x", bearer(fresh)), "GET", "/api/v2/payment/x", "payment", fresh);
    const jwks = await srv().call("/.well-known/jwks.json");
    expect((jwks.json.keys as JWK[]).map((k) => k.kid)).toEqual([srv().sandbox.keys.signing.kid]);
  });
});

describe("key rotation keeping the old key", () => {
  const srv = serverPerDescribe();

  it("rotate(true) → a token of the old key is still accepted, and so is one of the new key", async () => {
    const old = await srv().token();
    const oldKid = srv().sandbox.keys.signing.kid;
    await srv().sandbox.keys.rotate(true);
    const newKid = srv().sandbox.keys.signing.kid;
    expect(newKid).not.toBe(oldKid);
    expectOk(await srv().call("/api/v2/payment/x", bearer(old)), "GET", "/api/v2/payment/x", "payment", old);
    const fresh = await srv().token();
    expect(decodeProtectedHeader(fresh).kid).toBe(newKid);
    expectOk(await srv().call("/api/v2/cashout/x", bearer(fresh)), "GET", "/api/v2/cashout/x", "cashout", fresh);
    const jwks = await srv().call("/.well-known/jwks.json");
    expect((jwks.json.keys as JWK[]).map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
  });
});

describe("scopes: a merchant without the cashout right", () => {
  const srv = serverPerDescribe({
    merchants: [{ id: "m_pay_only", apiKey: "k1", apiSecret: "s1-secret-value", paymentToken: "pt1", scopes: ["payment"] }],
  });

  it("cashout → 403 insufficient_scope with error and scope in the challenge", async () => {
    const token = await srv().token("k1", "s1-secret-value");
    const r = await srv().call("/api/v2/cashout/transfer", { method: "POST", headers: { authorization: `Bearer ${token}` } });
    const description =
      "The access token of merchant 'm_pay_only' has no 'cashout' scope (it has: payment). This merchant is not allowed to use /api/v2/cashout/ endpoints; ask for the 'cashout' right or use a merchant that has it.";
    expectRefusal(
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
    const token = await srv().token("k1", "s1-secret-value");
    const r = await srv().call("/api/v2/payment/charge", { method: "POST", headers: { authorization: `Bearer ${token}` } });
    expectOk(r, "POST", "/api/v2/payment/charge", "payment", token, "m_pay_only");
  });
});

describe.each(["RS256", "ES256"] as const)("JWKS with %s: the published keys verify an issued access token", (algorithm) => {
  const srv = serverPerDescribe({ algorithm });

  it("GET /.well-known/jwks.json + createLocalJWKSet + jwtVerify accepts the token", async () => {
    const token = await srv().token();
    const r = await srv().call("/.well-known/jwks.json");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
    const keys = r.json.keys as JWK[];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kid: srv().sandbox.keys.signing.kid, alg: algorithm, use: "sig" });
    expect(keys[0]).not.toHaveProperty("d");
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(r.json), {
      issuer: ISSUER,
      audience: AUDIENCE,
      typ: "at+jwt",
      algorithms: [algorithm],
      currentDate: new Date(T0),
    });
    expect(protectedHeader).toEqual({ alg: algorithm, kid: srv().sandbox.keys.signing.kid, typ: "at+jwt" });
    expect(payload).toMatchObject({ sub: DEFAULT_MERCHANT_ID, iat: T0_SECONDS, exp: T0_SECONDS + 3600, scope: "payment cashout" });
  });

  it(`a ${algorithm} token is accepted by the protected groups`, async () => {
    const token = await srv().token();
    expectOk(await srv().call("/api/v2/cashout/x", bearer(token)), "GET", "/api/v2/cashout/x", "cashout", token);
  });
});

describe("JWKS with HS256: no public key is published", () => {
  const srv = serverPerDescribe({ algorithm: "HS256" });

  it("the keys array is empty", async () => {
    const r = await srv().call("/.well-known/jwks.json");
    expect({ status: r.status, json: r.json }).toEqual({ status: 200, json: { keys: [] } });
  });

  it("an HS256 access token is accepted by the protected groups", async () => {
    const token = await srv().token();
    expectOk(await srv().call("/api/v2/payment/x", bearer(token)), "GET", "/api/v2/payment/x", "payment", token);
  });
});

describe("a merchant disabled after its token was issued", () => {
  const t = serverPerDescribe();

  it("its tokens stop working at once: 401 merchant_disabled", async () => {
    const token = await t().token();
    expect((await t().call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    internalsOf(t().sandbox).merchants.byKey("sandbox-api-key")!.disabled = true;
    const r = await t().call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } });
    const description =
      "The merchant of this token ('merchant_sandbox_default') has been disabled since the token was issued; its tokens are no longer accepted. Use an active merchant's credentials.";
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe(`Bearer realm="merchant-api", error="invalid_token", error_description="${description}"`);
    expect(r.json).toEqual(problem(401, "Unauthorized", "merchant_disabled", description, "/api/v2/payment/x", "invalid_token"));
  });
});
