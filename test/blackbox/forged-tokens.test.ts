import { sign as cryptoSign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CompactEncrypt,
  CompactSign,
  SignJWT,
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importJWK,
  type CryptoKey as JoseCryptoKey,
  type JWK,
  type JWTPayload,
} from "jose";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  T0,
  postJson,
  problem,
  rawGet,
  serverPerDescribe,
  startTestServer,
  type Reply,
  type TestServer,
} from "../support/server.js";
import { AUDIENCE, ISSUER, RENEW_HINT, challenge, expectProblem } from "../support/expect.js";

/**
 * A catalogue of forged, tampered and malformed bearer tokens, each sent as a real HTTP request
 * to a protected endpoint of a real server (docs/behaviour.md, "Access tokens" and the protected groups,
 * RFC 6750, RFC 8725). Every case asserts the exact status, the exact problem+json body and the
 * exact WWW-Authenticate challenge; none may ever be a 500 or an accepted forgery.
 *
 * Tokens the sandbox should trust are signed with a key this file generates and hands to the
 * sandbox as its configured `signingKey`, so the catalogue needs nothing from the sandbox's insides:
 * attackers get the public key from /.well-known/jwks.json like anyone else.
 *
 * This file owns the token catalogue; the rules for the Authorization header itself (scheme,
 * spacing, repeated headers) live in protected-endpoints.test.ts, once.
 */

const PAYMENT = "/api/v2/payment/p_1";
const CASHOUT = "/api/v2/cashout/c_1";
const T0_SECONDS = T0 / 1000;
const NOTE = "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.";

// ---------------------------------------------------------------------------------------------
// The descriptions the sandbox gives (src/core/access-tokens.ts, src/core/bearer.ts)

const SEND_UNCHANGED = "Send the access_token value from POST /api/v2/auth/token unchanged.";
const D = {
  algRejected: (alg: string, accepted = "RS256") =>
    `The token's algorithm '${alg}' is not accepted; this sandbox signs and accepts ${accepted} only. ${SEND_UNCHANGED}`,
  signature: `The token's signature does not verify: it was altered after it was issued, or signed with another key. ${RENEW_HINT}`,
  unknownKid: (kid: string) =>
    `The token's signing key (kid '${kid}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`,
  kidMissing: `The token has no 'kid' header, so no key can verify it. ${RENEW_HINT}`,
  notJwt: `The bearer token is not a JWT (expected three base64url parts separated by dots). ${SEND_UNCHANGED}`,
  headerNotJson: `The token's header is not valid base64url-encoded JSON. ${SEND_UNCHANGED}`,
  notWellFormed: `The token is not a well-formed signed JWT. ${SEND_UNCHANGED}`,
  unsupported: `The token uses a header or feature this API does not support (e.g. an unknown 'crit' entry). ${RENEW_HINT}`,
  encrypted: "The token is an encrypted JWT (JWE); this API accepts only the signed access token (JWS) from POST /api/v2/auth/token.",
  expired: (exp: number, now: number) =>
    `The access token expired at ${iso(exp)} (sandbox time is now ${iso(now)}). Renew it before it expires: ${RENEW_HINT}`,
  notBefore: (nbf: number, now: number) =>
    `The token is not valid before ${iso(nbf)} (sandbox time is now ${iso(now)}). Check the clocks, then request a new access token from POST /api/v2/auth/token.`,
  issuedInFuture: (iat: number, now: number) =>
    `The token says it was issued at ${iso(iat)}, after the sandbox's current time ${iso(now)}. Check the clocks, then request a new access token from POST /api/v2/auth/token.`,
  wrongIssuer: (iss: string) => `The token was issued by '${iss}', not by this sandbox ('${ISSUER}'). ${RENEW_HINT}`,
  wrongAudience: (aud: string) => `The token is meant for audience '${aud}', not '${AUDIENCE}'. ${RENEW_HINT}`,
  loginToken:
    "This token comes from the deprecated POST /api/login_check; payment and cashout endpoints accept only access tokens. Exchange api_key and api_secret at POST /api/v2/auth/token and send that access_token.",
  wrongTyp: (typ: string) => `The token's type (typ '${typ}') is not an access token (at+jwt). ${RENEW_HINT}`,
  paymentToken:
    "This is a merchant payment token; it only authorises POST /api/v2/payment/init. Payment and cashout endpoints need the access token (JWT) from POST /api/v2/auth/token.",
  notBearer: (shown: string) =>
    `The Authorization header uses ${shown}, not the Bearer scheme. Send 'Authorization: Bearer <token>' with the access token.`,
  bearerMalformed:
    "The bearer token contains characters a token cannot have (spaces, quotes or others outside RFC 6750's token68). Send the access token exactly as issued, with one space after 'Bearer'.",
  repeated: "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
  claimInvalid: (claim: string) => `The token's '${claim}' claim is missing or invalid (invalid). ${RENEW_HINT}`,
  nbfInvalid: (got: string) =>
    `The token's 'nbf' claim is invalid: it must be a number of seconds since 1970 (RFC 7519 NumericDate), not ${got}. ${RENEW_HINT}`,
  bom: (part: string) => `The token's ${part} JSON starts with a byte order mark (UTF-8 BOM), which JSON in a JWT may not have. ${SEND_UNCHANGED}`,
  notCanonical: (part: string) =>
    `The token's ${part} is not canonical base64url: its last character carries bits past the end of the data, so it is another text of the token. ${SEND_UNCHANGED}`,
  highS: `The token's ES256 signature is in its high-S form (S above half the curve order): a second text of a signature, which this API refuses so that a token has one text only. ${SEND_UNCHANGED}`,
};

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

// ---------------------------------------------------------------------------------------------
// helpers

function invalidToken(code: string, description: string, path = PAYMENT) {
  return problem(401, "Unauthorized", code, description, path, "invalid_token");
}

function invalidRequest(code: string, description: string, path = PAYMENT) {
  return problem(400, "Bad Request", code, description, path, "invalid_request");
}

/** expectProblem with the exact challenge of every refusal (not only invalid_token), echoing none of `notEchoed`. */
function expectRefusal(r: Reply, expected: ReturnType<typeof problem>, notEchoed: string[] = []): void {
  expectProblem(r, expected, { headers: { "www-authenticate": challenge(expected.error!, expected.detail) }, notEchoed });
}

/** The placeholder an authenticated call gets, exactly. */
function expectAccepted(r: Reply, token: string, path = PAYMENT, scope: "payment" | "cashout" = "payment"): void {
  const claims = decodeJwt(token);
  expect({ status: r.status, json: r.json }, r.text).toEqual({
    status: 200,
    json: {
      sandbox: true,
      merchant_id: DEFAULT_MERCHANT_ID,
      operation: `GET ${path}`,
      scope,
      token_id: claims.jti,
      expires_at: iso(claims.exp as number),
      note: NOTE,
    },
  });
  expect(r.headers.get("content-type")).toBe("application/json");
  expect(r.headers.get("www-authenticate")).toBeNull();
}

function b64url(value: unknown): string {
  return Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
}

function parts(token: string): [string, string, string] {
  return token.split(".") as [string, string, string];
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(parts(token)[1], "base64url").toString("utf8")) as Record<string, unknown>;
}

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * The same bytes under another text: the last character's lowest bit is always one of the bits
 * past the end of the data (4 of them after 1 byte, 2 after 2), which decoders drop.
 */
function withUnusedBitSet(part: string): string {
  expect(part.length % 4, "a part whose last character has unused bits").not.toBe(0);
  const last = B64URL.indexOf(part.at(-1)!);
  expect(last & 1, "canonical to begin with").toBe(0);
  const other = part.slice(0, -1) + B64URL[last | 1];
  expect(Buffer.from(other, "base64url")).toEqual(Buffer.from(part, "base64url"));
  return other;
}

/** An RS256 JWS over exactly these header and payload texts, signed with a PKCS#8 PEM. */
function signRs256Texts(pem: string, header: string, payload: string): string {
  const input = `${header}.${payload}`;
  return `${input}.${cryptoSign("sha256", Buffer.from(input), pem).toString("base64url")}`;
}

/** The P-256 group order: (r, n − s) verifies wherever (r, s) does. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

function sOf(signature: string): bigint {
  return BigInt(`0x${Buffer.from(signature, "base64url").subarray(32).toString("hex")}`);
}

/** The other text of an ES256 signature: s replaced by n − s. */
function flipS(signature: string): string {
  const bytes = Buffer.from(signature, "base64url");
  const flipped = Buffer.from((P256_N - sOf(signature)).toString(16).padStart(64, "0"), "hex");
  return Buffer.concat([bytes.subarray(0, 32), flipped]).toString("base64url");
}

let jtiCounter = 0;
/** Access-token claims exactly as the sandbox issues them, for the default merchant, at `now`. */
function accessClaims(now: number, overrides: Record<string, unknown> = {}): JWTPayload {
  jtiCounter += 1;
  return {
    iss: ISSUER,
    sub: DEFAULT_MERCHANT_ID,
    aud: AUDIENCE,
    iat: now,
    exp: now + 3600,
    jti: `forged-tokens-${jtiCounter}`,
    client_id: "sandbox-api-key",
    scope: "payment cashout",
    ...overrides,
  };
}

/** A signing key pair this file owns: the private key goes to the sandbox as its `signingKey`. */
interface OwnedKey {
  pem: string;
  privateKey: JoseCryptoKey;
  publicJwk: JWK;
  kid: string;
}

async function ownedKey(alg: "RS256" | "ES256"): Promise<OwnedKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { pem: await exportPKCS8(privateKey), privateKey, publicJwk, kid: await calculateJwkThumbprint(publicJwk) };
}

/** Signs `claims` with `key` under a header that defaults to the sandbox's own shape. */
async function sign(
  key: { privateKey: JoseCryptoKey | Uint8Array; kid?: string },
  claims: JWTPayload,
  header: Record<string, unknown> = {},
  alg = "RS256",
): Promise<string> {
  const h: Record<string, unknown> = { alg, typ: "at+jwt", ...(key.kid === undefined ? {} : { kid: key.kid }), ...header };
  for (const [name, value] of Object.entries(h)) if (value === undefined) delete h[name];
  return new SignJWT(claims).setProtectedHeader(h as { alg: string }).sign(key.privateKey);
}

async function get(srv: TestServer, authorization: string, path = PAYMENT): Promise<Reply> {
  return srv.call(path, { headers: { authorization } });
}

/** The request journal of the control plane (redacted, bounded). */
async function journal(srv: TestServer): Promise<Array<{ status: number; path: string; code?: string }>> {
  const r = await srv.call("/__sandbox/requests?limit=1000");
  expect(r.status).toBe(200);
  return r.json.requests;
}

/** A server an attacker points `jku` / `x5u` at: it counts every request it gets. */
async function attackerServer(body: string): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits += 1;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------

describe("forged tokens against an RS256 sandbox (default settings, 0 s leeway)", () => {
  let srv: TestServer;
  let trusted: OwnedKey;
  let attacker: OwnedKey;
  /** The public key as any attacker gets it: from the JWKS document. */
  let jwk: JWK;
  /** A legitimately issued access token, taken before any forgery is tried. */
  let legit: string;

  const server = serverPerDescribe(async () => {
    trusted = await ownedKey("RS256");
    attacker = await ownedKey("RS256");
    return { signingKey: trusted.pem };
  });

  beforeAll(async () => {
    srv = server();
    const jwks = await srv.call("/.well-known/jwks.json");
    expect(jwks.status).toBe(200);
    expect(jwks.json.keys).toHaveLength(1);
    jwk = jwks.json.keys[0] as JWK;
    expect(jwk).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", kid: trusted.kid });
    legit = await srv.token();
    expect(parts(legit)).toHaveLength(3);
  });
  beforeEach(() => {
    srv.sandbox.clock.set(T0);
  });

  it("control: the legitimately issued token is accepted before the catalogue", async () => {
    expectAccepted(await get(srv, `Bearer ${legit}`), legit);
  });

  it("control: a token this file signs with the configured key and the sandbox's claims is accepted", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS));
    expectAccepted(await get(srv, `Bearer ${token}`), token);
  });

  // -- alg "none" ------------------------------------------------------------------------------

  for (const alg of ["none", "None", "NONE", "nOnE"]) {
    it(`alg "${alg}" with an empty signature → 401 token_algorithm_rejected`, async () => {
      const forged = `${b64url({ alg, typ: "at+jwt", kid: trusted.kid })}.${b64url(accessClaims(T0_SECONDS))}.`;
      expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected(alg)));
    });
  }

  it('alg "none" over a legitimate token\'s payload, keeping its real signature → 401 token_algorithm_rejected', async () => {
    const [, p, s] = parts(legit);
    const forged = `${b64url({ alg: "none", typ: "at+jwt", kid: trusted.kid })}.${p}.${s}`;
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("none")));
  });

  // -- key confusion ---------------------------------------------------------------------------

  it("key confusion: HS256 HMAC-signed with the RSA public key as SPKI PEM (from the JWKS) → 401 token_algorithm_rejected", async () => {
    const publicKey = await importJWK(jwk, "RS256", { extractable: true });
    const pem = await exportSPKI(publicKey as JoseCryptoKey);
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const forged = await sign({ privateKey: new TextEncoder().encode(pem), kid: trusted.kid }, accessClaims(T0_SECONDS), {}, "HS256");
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("HS256")));
  });

  it("key confusion: HS256 HMAC-signed with the public JWK's JSON text → 401 token_algorithm_rejected", async () => {
    const secret = new TextEncoder().encode(JSON.stringify(jwk));
    const forged = await sign({ privateKey: secret, kid: trusted.kid }, accessClaims(T0_SECONDS), {}, "HS256");
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("HS256")));
  });

  it("key confusion: HS256 HMAC-signed with the DER SPKI bytes of the public key → 401 token_algorithm_rejected", async () => {
    const publicKey = await importJWK(jwk, "RS256", { extractable: true });
    const pem = await exportSPKI(publicKey as JoseCryptoKey);
    const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64");
    const forged = await sign({ privateKey: new Uint8Array(der), kid: trusted.kid }, accessClaims(T0_SECONDS), {}, "HS256");
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("HS256")));
  });

  // -- signature -------------------------------------------------------------------------------

  it("signature stripped (header.payload.) → 401 token_signature_invalid", async () => {
    const [h, p] = parts(legit);
    expectRefusal(await get(srv, `Bearer ${h}.${p}.`), invalidToken("token_signature_invalid", D.signature));
  });

  it("`abc` (no dots at all) → 401 token_malformed (not a JWT)", async () => {
    expectRefusal(await get(srv, "Bearer abc"), invalidToken("token_malformed", D.notJwt));
  });

  it("a header that is not base64url JSON → 401 token_malformed", async () => {
    const bad = `${b64url("not json")}.${b64url({ sub: "x" })}.sig`;
    expectRefusal(await get(srv, `Bearer ${bad}`), invalidToken("token_malformed", D.headerNotJson), [bad]);
  });

  it("signature and its dot stripped (header.payload) → 401 token_malformed (not a JWT)", async () => {
    const [h, p] = parts(legit);
    expectRefusal(await get(srv, `Bearer ${h}.${p}`), invalidToken("token_malformed", D.notJwt));
  });

  it("signature truncated to half its length → 401 token_signature_invalid", async () => {
    const [h, p, s] = parts(legit);
    const half = s.slice(0, s.length - (s.length % 4) - 172); // still a valid base64url length
    expectRefusal(await get(srv, `Bearer ${h}.${p}.${half}`), invalidToken("token_signature_invalid", D.signature));
  });

  it("signature truncated by one character (an impossible base64url length) → 401 token_malformed", async () => {
    expectRefusal(await get(srv, `Bearer ${legit.slice(0, -1)}`), invalidToken("token_malformed", D.notWellFormed));
  });

  it("payload changed under the old signature (sub → another merchant) → 401 token_signature_invalid", async () => {
    const [h, , s] = parts(legit);
    const forged = `${h}.${b64url({ ...claimsOf(legit), sub: "merchant_someone_else" })}.${s}`;
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_signature_invalid", D.signature));
  });

  it("payload changed under the old signature (scope widened, exp pushed a year out) → 401 token_signature_invalid", async () => {
    const [h, , s] = parts(legit);
    const c = claimsOf(legit);
    const forged = `${h}.${b64url({ ...c, scope: "payment cashout admin", exp: (c.exp as number) + 365 * 86_400 })}.${s}`;
    expectRefusal(await get(srv, `Bearer ${forged}`, CASHOUT), invalidToken("token_signature_invalid", D.signature, CASHOUT));
  });

  it("header changed under the old signature (an extra header member) → 401 token_signature_invalid", async () => {
    const [, p, s] = parts(legit);
    const forged = `${b64url({ alg: "RS256", kid: trusted.kid, typ: "at+jwt", x: 1 })}.${p}.${s}`;
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_signature_invalid", D.signature));
  });

  it("the sandbox's kid on a token signed with the attacker's own RSA key → 401 token_signature_invalid", async () => {
    const forged = await sign({ privateKey: attacker.privateKey, kid: trusted.kid }, accessClaims(T0_SECONDS));
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_signature_invalid", D.signature));
  });

  // -- time (0 s leeway) -------------------------------------------------------------------------

  it("expired: exp = now (0 s leeway) → 401 token_expired", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS - 3600, { exp: T0_SECONDS }));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_expired", D.expired(T0_SECONDS, T0_SECONDS)));
  });

  it("nbf 1 s in the future (0 s leeway) → 401 token_not_yet_valid", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS, { nbf: T0_SECONDS + 1 }));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_not_yet_valid", D.notBefore(T0_SECONDS + 1, T0_SECONDS)));
  });

  it("iat 1 s in the future (0 s leeway) → 401 token_not_yet_valid", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS + 1));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_not_yet_valid", D.issuedInFuture(T0_SECONDS + 1, T0_SECONDS)));
  });

  // -- claims and typ on a correctly signed token ----------------------------------------------

  it("wrong iss (correctly signed) → 401 token_wrong_issuer", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS, { iss: "https://evil.example" }));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_wrong_issuer", D.wrongIssuer("https://evil.example")));
  });

  it("wrong aud (correctly signed) → 401 token_wrong_audience", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS, { aud: "another-api" }));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_wrong_audience", D.wrongAudience("another-api")));
  });

  it("an audience array that includes merchant-api (correctly signed) → 200, accepted", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS, { aud: ["another-api", AUDIENCE] }));
    expectAccepted(await get(srv, `Bearer ${token}`), token);
  });

  it('typ "JWT" instead of "at+jwt" (correctly signed) → 401 token_not_access_token, naming the deprecated login (loginToken refused)', async () => {
    // By default the login's kind is accepted (test/blackbox/login-token.test.ts); the same key, refusing it.
    const strict = await startTestServer({ signingKey: trusted.pem, loginToken: "refused" });
    try {
      const token = await sign(trusted, accessClaims(T0_SECONDS), { typ: "JWT" });
      expectRefusal(await get(strict, `Bearer ${token}`), invalidToken("token_not_access_token", D.loginToken));
    } finally {
      await strict.close();
    }
  });

  it('typ "id+jwt" (correctly signed) → 401 token_not_access_token naming the type', async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS), { typ: "id+jwt" });
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_not_access_token", D.wrongTyp("id+jwt")));
  });

  it("no typ header at all (correctly signed) → 401 token_not_access_token saying the typ is missing", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS), { typ: undefined });
    expect(Object.keys(JSON.parse(Buffer.from(parts(token)[0], "base64url").toString()))).not.toContain("typ");
    // Regression test: the description used to read "typ 'undefined'" (JavaScript leaking into
    // the message); it now says the token has no typ.
    expectRefusal(
      await get(srv, `Bearer ${token}`),
      invalidToken(
        "token_not_access_token",
        "The token has no type (no typ header); an access token says typ 'at+jwt'. Request a new access token from POST /api/v2/auth/token.",
      ),
    );
  });

  // -- kid -------------------------------------------------------------------------------------

  it("unknown kid (attacker key, attacker kid) → 401 token_unknown_kid", async () => {
    const forged = await sign(attacker, accessClaims(T0_SECONDS));
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_unknown_kid", D.unknownKid(attacker.kid)));
  });

  it('kid "../../etc/passwd" → 401 token_unknown_kid, the kid only echoed as text', async () => {
    const forged = await sign({ privateKey: attacker.privateKey, kid: "../../etc/passwd" }, accessClaims(T0_SECONDS));
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_unknown_kid", D.unknownKid("../../etc/passwd")));
  });

  it(`kid "' OR 1=1 --" → 401 token_unknown_kid`, async () => {
    const forged = await sign({ privateKey: attacker.privateKey, kid: "' OR 1=1 --" }, accessClaims(T0_SECONDS));
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_unknown_kid", D.unknownKid("' OR 1=1 --")));
  });

  it('kid with CR/LF and quotes ("a\\r\\nX-Injected: 1\\"") → 401 token_unknown_kid, no header injected', async () => {
    const kid = 'a\r\nX-Injected: 1"';
    const forged = await sign({ privateKey: attacker.privateKey, kid }, accessClaims(T0_SECONDS));
    const r = await get(srv, `Bearer ${forged}`);
    expectRefusal(r, invalidToken("token_unknown_kid", D.unknownKid('a??X-Injected: 1"')));
    expect(r.headers.get("x-injected")).toBeNull();
  });

  it("no kid header (signed with the attacker key) → 401 token_kid_missing", async () => {
    const forged = await sign({ privateKey: attacker.privateKey }, accessClaims(T0_SECONDS));
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_kid_missing", D.kidMissing));
  });

  // -- jku, x5u, embedded jwk ------------------------------------------------------------------

  it("jku pointing at an attacker's JWKS (attacker key and kid) → 401 token_unknown_kid, the URL never fetched", async () => {
    const evil = await attackerServer(JSON.stringify({ keys: [{ ...attacker.publicJwk, kid: attacker.kid, alg: "RS256", use: "sig" }] }));
    try {
      const forged = await sign(attacker, accessClaims(T0_SECONDS), { jku: `${evil.url}/jwks.json` });
      expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_unknown_kid", D.unknownKid(attacker.kid)));
      expect(evil.hits()).toBe(0);
    } finally {
      await evil.close();
    }
  });

  it("jku pointing at an attacker's JWKS, with the sandbox's kid → 401 token_signature_invalid, the URL never fetched", async () => {
    const evil = await attackerServer(JSON.stringify({ keys: [{ ...attacker.publicJwk, kid: trusted.kid, alg: "RS256", use: "sig" }] }));
    try {
      const forged = await sign({ privateKey: attacker.privateKey, kid: trusted.kid }, accessClaims(T0_SECONDS), {
        jku: `${evil.url}/jwks.json`,
      });
      expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_signature_invalid", D.signature));
      expect(evil.hits()).toBe(0);
    } finally {
      await evil.close();
    }
  });

  it("x5u pointing at an attacker's certificate URL → 401 token_unknown_kid, the URL never fetched", async () => {
    const evil = await attackerServer("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    try {
      const forged = await sign(attacker, accessClaims(T0_SECONDS), { x5u: `${evil.url}/cert.pem` });
      expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_unknown_kid", D.unknownKid(attacker.kid)));
      expect(evil.hits()).toBe(0);
    } finally {
      await evil.close();
    }
  });

  it("embedded jwk header (the attacker's public key) with the sandbox's kid → 401 token_signature_invalid", async () => {
    const forged = await sign({ privateKey: attacker.privateKey, kid: trusted.kid }, accessClaims(T0_SECONDS), {
      jwk: attacker.publicJwk,
    });
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_signature_invalid", D.signature));
  });

  it("embedded jwk header and no kid → 401 token_kid_missing (the embedded key is not used)", async () => {
    const forged = await sign({ privateKey: attacker.privateKey }, accessClaims(T0_SECONDS), { jwk: attacker.publicJwk });
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_kid_missing", D.kidMissing));
  });

  // -- crit ------------------------------------------------------------------------------------

  it("unknown crit header on a correctly signed token → 401 token_unsupported", async () => {
    const token = await new SignJWT(accessClaims(T0_SECONDS))
      .setProtectedHeader({ alg: "RS256", kid: trusted.kid, typ: "at+jwt", crit: ["x-must-understand"], "x-must-understand": true })
      .sign(trusted.privateKey, { crit: { "x-must-understand": true } });
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_unsupported", D.unsupported));
  });

  it("unknown crit header on an attacker-signed token with the sandbox's kid → 401 token_unsupported", async () => {
    const token = await new SignJWT(accessClaims(T0_SECONDS))
      .setProtectedHeader({ alg: "RS256", kid: trusted.kid, typ: "at+jwt", crit: ["exp"], exp: 1 })
      .sign(attacker.privateKey, { crit: { exp: true } });
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_unsupported", D.unsupported));
  });

  // -- JWE and nested JWT ----------------------------------------------------------------------

  it("a real JWE (5 parts, RSA-OAEP-256 to the sandbox's public key) wrapping the legitimate token → 401 token_encrypted", async () => {
    const { kid, alg: _alg, use: _use, ...bare } = jwk;
    const encKey = await importJWK({ ...bare, alg: "RSA-OAEP-256" }, "RSA-OAEP-256");
    const jwe = await new CompactEncrypt(new TextEncoder().encode(legit))
      .setProtectedHeader({ alg: "RSA-OAEP-256", enc: "A256GCM", cty: "JWT", kid: kid! })
      .encrypt(encKey);
    expect(jwe.split(".")).toHaveLength(5);
    expectRefusal(await get(srv, `Bearer ${jwe}`), invalidToken("token_encrypted", D.encrypted));
  });

  it('a nested JWT (cty "JWT", payload = the legitimate token) signed by the attacker under the sandbox\'s kid → 401 token_signature_invalid', async () => {
    const nested = await new CompactSign(new TextEncoder().encode(legit))
      .setProtectedHeader({ alg: "RS256", kid: trusted.kid, typ: "at+jwt", cty: "JWT" })
      .sign(attacker.privateKey);
    expectRefusal(await get(srv, `Bearer ${nested}`), invalidToken("token_signature_invalid", D.signature));
  });

  it('a nested JWT (cty "JWT") whose outer layer is signed with the trusted key → 401 token_malformed, not accepted', async () => {
    const nested = await new CompactSign(new TextEncoder().encode(legit))
      .setProtectedHeader({ alg: "RS256", kid: trusted.kid, typ: "at+jwt", cty: "JWT" })
      .sign(trusted.privateKey);
    expectRefusal(await get(srv, `Bearer ${nested}`), invalidToken("token_malformed", D.notWellFormed));
  });

  // -- size, alphabet, duplicate JSON keys -----------------------------------------------------

  it("a 64 KB token → 431 Request Header Fields Too Large as problem+json, never a 500 or a dropped connection", async () => {
    const huge = `${b64url({ alg: "RS256", kid: trusted.kid, typ: "at+jwt" })}.${"A".repeat(64 * 1024)}.${parts(legit)[2]}`;
    const r = await rawGet(srv, PAYMENT, [`Authorization: Bearer ${huge}`]);
    // Regression test: this was a 400 "not valid HTTP/1.1" without cache-control. RFC 6585 §5: a
    // header section too large to process is 431.
    expect(r.status, r.text).toBe(431);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("connection")).toBe("close");
    const detail =
      "The request's headers are larger than this sandbox accepts (16384 bytes in all). Send shorter headers: an access token is under 2 KB, so an oversized Authorization or Cookie header is the usual cause (the limit is serve --max-header-bytes).";
    expect(r.json).toEqual(problem(431, "Request Header Fields Too Large", "headers_too_large", detail, "/", "invalid_request"));
  });

  it("a 12 KB token (within the server's header limit) signed by the attacker under the sandbox's kid → 401 token_signature_invalid", async () => {
    const forged = await sign({ privateKey: attacker.privateKey, kid: trusted.kid }, accessClaims(T0_SECONDS, { pad: "x".repeat(9000) }));
    expect(forged.length).toBeGreaterThan(12_000);
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_signature_invalid", D.signature));
  });

  const segmentNames = ["header", "payload", "signature"] as const;
  for (const [i, segment] of segmentNames.entries()) {
    for (const ch of ["+", "/", "~"]) {
      it(`a token68 but non-base64url character '${ch}' in the ${segment} segment → 401 token_malformed (not a JWT)`, async () => {
        const p = [...parts(legit)];
        p[i] = p[i]!.slice(0, 10) + ch + p[i]!.slice(11);
        expectRefusal(await get(srv, `Bearer ${p.join(".")}`), invalidToken("token_malformed", D.notJwt));
      });
    }
    if (segment === "signature") {
      // token68 allows '=' only at the very end: there it reaches the JWT check.
      it(`'=' padding at the end of the ${segment} segment (the token's end) → 401 token_malformed (not a JWT)`, async () => {
        const p = [...parts(legit)];
        p[i] = p[i]! + "==";
        expectRefusal(await get(srv, `Bearer ${p.join(".")}`), invalidToken("token_malformed", D.notJwt));
      });
    } else {
      // Inside the token '=' is outside RFC 6750's b64token: the header itself is malformed.
      it(`'=' padding at the end of the ${segment} segment (inside the token) → 400 invalid_request bearer_token_malformed`, async () => {
        const p = [...parts(legit)];
        p[i] = p[i]! + "==";
        expectRefusal(await get(srv, `Bearer ${p.join(".")}`), invalidRequest("bearer_token_malformed", D.bearerMalformed));
      });
    }
    it(`a character outside token68 ('*') in the ${segment} segment → 400 invalid_request bearer_token_malformed`, async () => {
      const p = [...parts(legit)];
      p[i] = p[i]!.slice(0, 10) + "*" + p[i]!.slice(11);
      expectRefusal(await get(srv, `Bearer ${p.join(".")}`), invalidRequest("bearer_token_malformed", D.bearerMalformed));
    });
  }

  it('duplicate "alg" in the header ({"alg":"RS256",…,"alg":"none"}, hand-encoded, empty signature) → 401 token_algorithm_rejected for the last value', async () => {
    const header = `{"alg":"RS256","kid":"${trusted.kid}","typ":"at+jwt","alg":"none"}`;
    const forged = `${b64url(header)}.${parts(legit)[1]}.`;
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("none")));
  });

  it('duplicate "alg" in the header ({"alg":"none",…,"alg":"RS256"}) over the legitimate payload and signature → 401 token_signature_invalid', async () => {
    const [, p, s] = parts(legit);
    const header = `{"alg":"none","kid":"${trusted.kid}","typ":"at+jwt","alg":"RS256"}`;
    expectRefusal(await get(srv, `Bearer ${b64url(header)}.${p}.${s}`), invalidToken("token_signature_invalid", D.signature));
  });

  it('duplicate "sub" in the payload under the old signature → 401 token_signature_invalid', async () => {
    const [h, p, s] = parts(legit);
    const json = Buffer.from(p, "base64url").toString("utf8");
    const duplicated = json.replace(/}$/, ',"sub":"merchant_someone_else"}');
    expect(duplicated).toMatch(/"sub":.*"sub":/);
    expectRefusal(await get(srv, `Bearer ${h}.${b64url(duplicated)}.${s}`), invalidToken("token_signature_invalid", D.signature));
  });

  // -- claim types (correctly signed) -----------------------------------------------------------

  for (const [name, nbf, got] of [
    ["a string", String(T0_SECONDS + 3600), `a string ('${T0_SECONDS + 3600}')`],
    ["null", null, "null"],
    ["an object", { at: T0_SECONDS }, "an object"],
    ["true", true, "a boolean"],
  ] as const) {
    it(`regression: nbf as ${name} was ignored (accepted) → 401 token_claims_invalid`, async () => {
      const token = await sign(trusted, accessClaims(T0_SECONDS, { nbf }));
      expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_claims_invalid", D.nbfInvalid(got)));
    });
  }

  for (const claim of ["exp", "iat"]) {
    for (const [name, value] of [
      ["a string", String(T0_SECONDS + 60)],
      ["null", null],
      ["a numeric array", [T0_SECONDS + 60]],
    ] as const) {
      it(`${claim} as ${name} → 401 token_claims_invalid`, async () => {
        const token = await sign(trusted, accessClaims(T0_SECONDS, { [claim]: value }));
        expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_claims_invalid", D.claimInvalid(claim)));
      });
    }
  }

  // -- one token, one text -----------------------------------------------------------------------

  it("regression: a UTF-8 BOM before the header JSON (signed with the configured key) was accepted → 401 token_malformed", async () => {
    const header = b64url("\uFEFF" + JSON.stringify({ alg: "RS256", kid: trusted.kid, typ: "at+jwt" }));
    expect(Buffer.from(header, "base64url").subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const token = signRs256Texts(trusted.pem, header, b64url(accessClaims(T0_SECONDS)));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_malformed", D.bom("header")));
  });

  it("regression: a UTF-8 BOM before the payload JSON (signed with the configured key) was accepted → 401 token_malformed", async () => {
    const header = b64url({ alg: "RS256", kid: trusted.kid, typ: "at+jwt" });
    const token = signRs256Texts(trusted.pem, header, b64url("\uFEFF" + JSON.stringify(accessClaims(T0_SECONDS))));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_malformed", D.bom("payload")));
  });

  it("control: the same header and payload without a BOM, signed the same way, are accepted", async () => {
    const token = signRs256Texts(trusted.pem, b64url({ alg: "RS256", kid: trusted.kid, typ: "at+jwt" }), b64url(accessClaims(T0_SECONDS)));
    expectAccepted(await get(srv, `Bearer ${token}`), token);
  });

  it("regression: the legitimate token with its signature's last character changed in unused bits (same bytes) was accepted → 401 token_malformed", async () => {
    const [h, p, sig] = parts(legit);
    expect(sig.length % 4).toBe(2); // 256 bytes: 4 unused bits in the last character
    expectRefusal(await get(srv, `Bearer ${h}.${p}.${withUnusedBitSet(sig)}`), invalidToken("token_malformed", D.notCanonical("signature")));
  });

  for (const segment of ["header", "payload"] as const) {
    it(`regression: a non-canonical last character in the ${segment} (signed over that text with the configured key) was accepted → 401 token_malformed`, async () => {
      // Pad the JSON until its base64url has unused bits in the last character.
      let header = { alg: "RS256", kid: trusted.kid, typ: "at+jwt" } as Record<string, unknown>;
      let claims = accessClaims(T0_SECONDS);
      while (b64url(segment === "header" ? header : claims).length % 4 === 0) {
        if (segment === "header") header = { ...header, x: `${String(header.x ?? "")}a` };
        else claims = { ...claims, pad: `${String(claims.pad ?? "")}a` };
      }
      const h = segment === "header" ? withUnusedBitSet(b64url(header)) : b64url(header);
      const p = segment === "payload" ? withUnusedBitSet(b64url(claims)) : b64url(claims);
      const canonical = signRs256Texts(trusted.pem, b64url(header), b64url(claims));
      expectAccepted(await get(srv, `Bearer ${canonical}`), canonical);
      expectRefusal(await get(srv, `Bearer ${signRs256Texts(trusted.pem, h, p)}`), invalidToken("token_malformed", D.notCanonical(segment)));
    });
  }

  // -- foreign and wrong-kind tokens -----------------------------------------------------------

  it("a token from another sandbox instance (its own key) → 401 token_unknown_kid", async () => {
    const other = await startTestServer();
    try {
      const foreign = await other.token();
      expectAccepted(await get(other, `Bearer ${foreign}`), foreign);
      const { kid } = JSON.parse(Buffer.from(parts(foreign)[0], "base64url").toString()) as { kid: string };
      expect(kid).not.toBe(trusted.kid);
      expectRefusal(await get(srv, `Bearer ${foreign}`), invalidToken("token_unknown_kid", D.unknownKid(kid)));
    } finally {
      await other.close();
    }
  });

  it("the merchant payment token (sandbox-payment-token) as the bearer → 401 payment_token_not_accepted", async () => {
    expectRefusal(await get(srv, `Bearer ${DEFAULT_PAYMENT_TOKEN}`), invalidToken("payment_token_not_accepted", D.paymentToken), [
      DEFAULT_PAYMENT_TOKEN,
    ]);
  });

  it("the deprecated login's JWT (typ JWT, same key) on cashout → 401 token_not_access_token (loginToken refused)", async () => {
    const strict = await startTestServer({ signingKey: trusted.pem, loginToken: "refused" });
    try {
      const login = await strict.call("/api/login_check", postJson({ email: "merchant@sandbox.test", password: "sandbox-password" }));
      expect(login.status, login.text).toBe(200);
      const token = login.json.token as string;
      expectRefusal(await get(strict, `Bearer ${token}`, CASHOUT), invalidToken("token_not_access_token", D.loginToken, CASHOUT));
    } finally {
      await strict.close();
    }
  });

  // -- state -----------------------------------------------------------------------------------

  it("the legitimately issued token still works on both groups, whatever forgeries ran before (none changes state)", async () => {
    expectAccepted(await get(srv, `Bearer ${legit}`), legit);
    expectAccepted(await get(srv, `Bearer ${legit}`, CASHOUT), legit, CASHOUT, "cashout");
  });

  it("the journal records forgeries as the refusals they got, never a 5xx, and accepts only the legitimate token", async () => {
    // A server of its own, trusting the same key, so the journal holds exactly this test's calls.
    const own = await startTestServer({ signingKey: trusted.pem });
    try {
      const forgeries = [
        `${b64url({ alg: "none", typ: "at+jwt", kid: trusted.kid })}.${parts(legit)[1]}.`,
        await sign({ privateKey: attacker.privateKey, kid: trusted.kid }, accessClaims(T0_SECONDS)),
        `${parts(legit)[0]}.${b64url({ ...claimsOf(legit), sub: "merchant_someone_else" })}.${parts(legit)[2]}`,
        legit.slice(0, -1),
      ];
      for (const forged of forgeries) expect((await get(own, `Bearer ${forged}`)).status).toBe(401);
      expectAccepted(await get(own, `Bearer ${legit}`), legit);
      const entries = (await journal(own)) as Array<{ status: number; path: string; code?: string; tokenId?: string }>;
      expect(entries.map((e) => [e.status, e.path, e.code])).toEqual([
        [401, PAYMENT, "token_algorithm_rejected"],
        [401, PAYMENT, "token_signature_invalid"],
        [401, PAYMENT, "token_signature_invalid"],
        [401, PAYMENT, "token_malformed"],
        [200, PAYMENT, undefined],
      ]);
      expect(entries[4]!.tokenId).toBe(claimsOf(legit).jti);
    } finally {
      await own.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe("forged tokens against an ES256 sandbox (key confusion with an EC public key)", () => {
  let srv: TestServer;
  let jwk: JWK;
  let legit: string;

  const server = serverPerDescribe({ algorithm: "ES256" });

  beforeAll(async () => {
    srv = server();
    const jwks = await srv.call("/.well-known/jwks.json");
    expect(jwks.status).toBe(200);
    jwk = jwks.json.keys[0] as JWK;
    expect(jwk).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    legit = await srv.token();
  });

  it("control: the ES256 sandbox's own token is accepted", async () => {
    expectAccepted(await get(srv, `Bearer ${legit}`), legit);
  });

  it("key confusion: HS256 HMAC-signed with the EC public key as SPKI PEM → 401 token_algorithm_rejected (ES256 only)", async () => {
    const pem = await exportSPKI((await importJWK(jwk, "ES256", { extractable: true })) as JoseCryptoKey);
    const forged = await sign({ privateKey: new TextEncoder().encode(pem), kid: jwk.kid! }, accessClaims(T0_SECONDS), {}, "HS256");
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("HS256", "ES256")));
  });

  it("key confusion: HS256 HMAC-signed with the EC public JWK's JSON text → 401 token_algorithm_rejected (ES256 only)", async () => {
    const forged = await sign({ privateKey: new TextEncoder().encode(JSON.stringify(jwk)), kid: jwk.kid! }, accessClaims(T0_SECONDS), {}, "HS256");
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("HS256", "ES256")));
  });

  it("an RS256 token under the sandbox's EC kid → 401 token_algorithm_rejected (ES256 only)", async () => {
    const rsa = await ownedKey("RS256");
    const forged = await sign({ privateKey: rsa.privateKey, kid: jwk.kid! }, accessClaims(T0_SECONDS));
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("RS256", "ES256")));
  });

  it('alg "none" on the ES256 sandbox → 401 token_algorithm_rejected (ES256 only)', async () => {
    const forged = `${b64url({ alg: "none", typ: "at+jwt", kid: jwk.kid })}.${parts(legit)[1]}.`;
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_algorithm_rejected", D.algRejected("none", "ES256")));
  });

  it("regression: the legitimate token with its signature's S replaced by n − S (high-S, still verifies) was accepted → 401 token_signature_invalid", async () => {
    const [h, p, sig] = parts(legit);
    const highS = flipS(sig);
    expect(sOf(highS) > P256_N / 2n).toBe(true);
    expectRefusal(await get(srv, `Bearer ${h}.${p}.${highS}`), invalidToken("token_signature_invalid", D.highS));
  });

  it("a high-S signature over an altered payload → 401 token_signature_invalid saying it does not verify (the form is judged only on authentic tokens)", async () => {
    const [h, , sig] = parts(legit);
    const forged = `${h}.${b64url({ ...claimsOf(legit), scope: "payment cashout admin" })}.${flipS(sig)}`;
    expectRefusal(await get(srv, `Bearer ${forged}`), invalidToken("token_signature_invalid", D.signature));
  });

  it("the sandbox issues ES256 tokens in the low-S form only, and accepts them (16 tokens, issued and minted)", async () => {
    for (let i = 0; i < 8; i++) {
      const issued = await srv.token();
      const minted = (await srv.call("/__sandbox/tokens", postJson({ variant: "valid" }))).json.token as string;
      for (const token of [issued, minted]) {
        expect(sOf(parts(token)[2]) <= P256_N / 2n).toBe(true);
        expectAccepted(await get(srv, `Bearer ${token}`), token);
      }
    }
  });

  it("after the ES256 catalogue, the legitimate token still works", async () => {
    expectAccepted(await get(srv, `Bearer ${legit}`, CASHOUT), legit, CASHOUT, "cashout");
  });
});

// ---------------------------------------------------------------------------------------------

describe("time claims around a 30 s leeway (signed with the sandbox's configured key)", () => {
  const LEEWAY = 30;
  let srv: TestServer;
  let trusted: OwnedKey;

  const server = serverPerDescribe(async () => {
    trusted = await ownedKey("RS256");
    return { signingKey: trusted.pem, leeway: `${LEEWAY}s` };
  });

  beforeAll(() => {
    srv = server();
  });
  beforeEach(() => {
    srv.sandbox.clock.set(T0);
  });

  it("expired within the leeway (exp = now − 29 s) → 200, accepted", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS - 3600, { exp: T0_SECONDS - (LEEWAY - 1) }));
    expectAccepted(await get(srv, `Bearer ${token}`), token);
  });

  it("expired exactly at the leeway (exp = now − 30 s) → 401 token_expired", async () => {
    const exp = T0_SECONDS - LEEWAY;
    const token = await sign(trusted, accessClaims(T0_SECONDS - 3600, { exp }));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_expired", D.expired(exp, T0_SECONDS)));
  });

  it("expired beyond the leeway (exp = now − 31 s) → 401 token_expired", async () => {
    const exp = T0_SECONDS - LEEWAY - 1;
    const token = await sign(trusted, accessClaims(T0_SECONDS - 3600, { exp }));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_expired", D.expired(exp, T0_SECONDS)));
  });

  it("nbf in the future within the leeway (now + 30 s) → 200, accepted", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS, { nbf: T0_SECONDS + LEEWAY }));
    expectAccepted(await get(srv, `Bearer ${token}`), token);
  });

  it("nbf in the future beyond the leeway (now + 31 s) → 401 token_not_yet_valid", async () => {
    const nbf = T0_SECONDS + LEEWAY + 1;
    const token = await sign(trusted, accessClaims(T0_SECONDS, { nbf }));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_not_yet_valid", D.notBefore(nbf, T0_SECONDS)));
  });

  it("iat in the future within the leeway (now + 30 s) → 200, accepted", async () => {
    const token = await sign(trusted, accessClaims(T0_SECONDS + LEEWAY));
    expectAccepted(await get(srv, `Bearer ${token}`), token);
  });

  it("iat in the future beyond the leeway (now + 31 s) → 401 token_not_yet_valid", async () => {
    const iat = T0_SECONDS + LEEWAY + 1;
    const token = await sign(trusted, accessClaims(iat));
    expectRefusal(await get(srv, `Bearer ${token}`), invalidToken("token_not_yet_valid", D.issuedInFuture(iat, T0_SECONDS)));
  });

  it("mint endpoint variants: expired and not_yet_valid (leeway-aware) are refused, valid is accepted", async () => {
    const mint = (variant: string) => srv.call("/__sandbox/tokens", postJson({ variant }));
    const expired = await mint("expired");
    expect(expired.status, expired.text).toBe(201);
    const exp = expired.json.claims.exp as number;
    expect(exp).toBe(T0_SECONDS - LEEWAY - 60);
    expectRefusal(await get(srv, `Bearer ${expired.json.token}`), invalidToken("token_expired", D.expired(exp, T0_SECONDS)));

    const early = await mint("not_yet_valid");
    expect(early.status, early.text).toBe(201);
    const nbf = early.json.claims.nbf as number;
    expect(nbf).toBe(T0_SECONDS + LEEWAY + 300);
    expectRefusal(await get(srv, `Bearer ${early.json.token}`), invalidToken("token_not_yet_valid", D.notBefore(nbf, T0_SECONDS)));

    const valid = await mint("valid");
    expect(valid.status, valid.text).toBe(201);
    expectAccepted(await get(srv, `Bearer ${valid.json.token}`), valid.json.token);
  });
});

// ---------------------------------------------------------------------------------------------

describe("forged tokens against an HS256 sandbox", () => {
  const server = serverPerDescribe({ algorithm: "HS256" });

  it("an RS256-labelled token (the HS256 token's payload and signature) → 401 token_algorithm_rejected (HS256 only)", async () => {
    const token = await server().token();
    const [, p, s] = parts(token);
    const relabelled = `${b64url({ alg: "RS256", typ: "at+jwt", kid: server().sandbox.keys.signing.kid })}.${p}.${s}`;
    expectRefusal(await get(server(), `Bearer ${relabelled}`), invalidToken("token_algorithm_rejected", D.algRejected("RS256", "HS256")), [
      token,
      relabelled,
    ]);
  });
});
