import { describe, expect, it } from "vitest";
import { MerchantRegistry } from "../../src/core/merchants.js";
import { signCompactJws } from "../../src/core/jws.js";
import { importSigningKey } from "../../src/core/keys.js";
import { accessTokenClaims, loginTokenClaims } from "../../src/core/token-claims.js";
import { DEFAULT_TOKEN_FORMAT } from "../../src/core/token-format.js";

/** The one builder of the claims of issued, login and minted tokens. */

const registry = new MerchantRegistry([
  { id: "m1", apiKey: "key-1", apiSecret: "secret-1", paymentToken: "mpt_1", login: { email: "one@shop.test", password: "pw" }, scopes: ["payment"] },
  { id: "m2", apiKey: "key-2", apiSecret: "secret-2", paymentToken: "mpt_2" },
]);
const ISSUER = { issuer: "https://sandbox.test", audience: "merchant-api" };
const TIMES = { issuedAt: 1_700_000_000, ttlSeconds: 3600, jti: "tok-1" };
const MERCHANT_ID_CLAIM = { ...DEFAULT_TOKEN_FORMAT, merchantClaim: "merchant_id" };

describe("accessTokenClaims", () => {
  it("states issuer, subject, audience, times, id, the client's api_key and its scopes, in that order", () => {
    const claims = accessTokenClaims(ISSUER, registry.findById("m1")!, TIMES);
    expect(claims).toEqual({
      iss: "https://sandbox.test",
      sub: "m1",
      aud: "merchant-api",
      iat: 1_700_000_000,
      exp: 1_700_003_600,
      jti: "tok-1",
      client_id: "key-1",
      scope: "payment",
    });
    expect(Object.keys(claims)).toEqual(["iss", "sub", "aud", "iat", "exp", "jti", "client_id", "scope"]);
  });

  it("has an nbf only when one is asked for", () => {
    const claims = accessTokenClaims(ISSUER, registry.findById("m2")!, { ...TIMES, notBefore: 1_700_000_300 });
    expect(claims.nbf).toBe(1_700_000_300);
    expect(claims.scope).toBe("payment cashout");
    expect("nbf" in accessTokenClaims(ISSUER, registry.findById("m2")!, TIMES)).toBe(false);
  });
});

describe("the claims as a token carries them (the payload segment's JSON text, so an order change fails)", () => {
  // Clients that compare token text, or log it, see the claims in this order: the exchange's fast
  // path and the general path (nbf, another merchant claim) must keep writing them in it.
  async function payloadText(claims: object): Promise<string> {
    const key = await importSigningKey("HS256", "0123456789abcdef0123456789abcdef");
    const token = await signCompactJws({ alg: "HS256", kid: key.kid, typ: "at+jwt" }, claims, key);
    return Buffer.from(token.split(".")[1]!, "base64url").toString("utf8");
  }
  const REGISTERED = '"iss":"https://sandbox.test","sub":"m1","aud":"merchant-api","iat":1700000000,"exp":1700003600,"jti":"tok-1"';

  it("the token exchange's case (sub, no nbf): iss, sub, aud, iat, exp, jti, client_id, scope", async () => {
    expect(await payloadText(accessTokenClaims(ISSUER, registry.findById("m1")!, TIMES))).toBe(
      `{${REGISTERED},"client_id":"key-1","scope":"payment"}`,
    );
  });

  it("with an nbf: nbf after jti, before client_id", async () => {
    expect(await payloadText(accessTokenClaims(ISSUER, registry.findById("m1")!, { ...TIMES, notBefore: 1_700_000_300 }))).toBe(
      `{${REGISTERED},"nbf":1700000300,"client_id":"key-1","scope":"payment"}`,
    );
  });

  it("with another merchant claim (and an nbf): that claim first, then the rest in the same order", async () => {
    expect(await payloadText(accessTokenClaims(ISSUER, registry.findById("m1")!, TIMES, MERCHANT_ID_CLAIM))).toBe(
      `{"merchant_id":"m1",${REGISTERED},"client_id":"key-1","scope":"payment"}`,
    );
    expect(await payloadText(accessTokenClaims(ISSUER, registry.findById("m1")!, { ...TIMES, notBefore: 1_700_000_300 }, MERCHANT_ID_CLAIM))).toBe(
      `{"merchant_id":"m1",${REGISTERED},"nbf":1700000300,"client_id":"key-1","scope":"payment"}`,
    );
  });
});

describe("loginTokenClaims", () => {
  it("states the registered claims and Lexik's username and roles, and no client_id or scope", () => {
    expect(loginTokenClaims(ISSUER, registry.findById("m1")!, TIMES)).toEqual({
      iss: "https://sandbox.test",
      sub: "m1",
      aud: "merchant-api",
      iat: 1_700_000_000,
      exp: 1_700_003_600,
      jti: "tok-1",
      username: "one@shop.test",
      roles: ["ROLE_MERCHANT"],
    });
  });
});

describe("a profile's jwt section in the claims (issuer/audience none, merchantValue, extra claims)", () => {
  const LEXIK = {
    ...DEFAULT_TOKEN_FORMAT,
    merchantClaim: "username",
    merchantValue: "login" as const,
    iss: false,
    aud: false,
    claims: { roles: ["ROLE_USER"] },
  };
  async function payloadText(claims: object): Promise<string> {
    const key = await importSigningKey("HS256", "0123456789abcdef0123456789abcdef");
    return Buffer.from((await signCompactJws({ typ: "JWT", alg: "HS256" }, claims, key)).split(".")[1]!, "base64url").toString("utf8");
  }

  it("lexik: the login e-mail under username, no iss, sub or aud, roles from the profile; jti, client_id and scope kept", async () => {
    expect(await payloadText(accessTokenClaims(ISSUER, registry.findById("m1")!, TIMES, LEXIK))).toBe(
      '{"username":"one@shop.test","iat":1700000000,"exp":1700003600,"jti":"tok-1","roles":["ROLE_USER"],"client_id":"key-1","scope":"payment"}',
    );
  });

  it("merchantValue login, merchant without a login: its id stays in the claim", () => {
    expect(accessTokenClaims(ISSUER, registry.findById("m2")!, TIMES, LEXIK).username).toBe("m2");
  });

  it("merchantValue login with sub as the merchant claim: sub holds the e-mail", () => {
    const claims = accessTokenClaims(ISSUER, registry.findById("m1")!, TIMES, { ...DEFAULT_TOKEN_FORMAT, merchantValue: "login" });
    expect([claims.sub, Object.keys(claims)]).toEqual(["one@shop.test", ["iss", "sub", "aud", "iat", "exp", "jti", "client_id", "scope"]]);
  });

  it("extra claims come after the registered ones, on access and login tokens alike; the profile's roles replace the login's", () => {
    const tymon = { ...DEFAULT_TOKEN_FORMAT, claims: { prv: "23bd5c8949f600adb39e701c400872db7a5976f7" } };
    expect(Object.keys(accessTokenClaims(ISSUER, registry.findById("m1")!, TIMES, tymon))).toEqual([
      "iss",
      "sub",
      "aud",
      "iat",
      "exp",
      "jti",
      "prv",
      "client_id",
      "scope",
    ]);
    expect(loginTokenClaims(ISSUER, registry.findById("m1")!, TIMES, tymon).prv).toBe("23bd5c8949f600adb39e701c400872db7a5976f7");
    expect(loginTokenClaims(ISSUER, registry.findById("m1")!, TIMES, LEXIK)).toEqual({
      username: "one@shop.test",
      iat: 1_700_000_000,
      exp: 1_700_003_600,
      jti: "tok-1",
      roles: ["ROLE_USER"],
    });
  });

  it("login token under any merchant claim: a merchant claim named username holds what the format says, not the login's own username", () => {
    const byId = { ...DEFAULT_TOKEN_FORMAT, merchantClaim: "username" };
    expect(loginTokenClaims(ISSUER, registry.findById("m1")!, TIMES, byId).username).toBe("m1");
    expect(loginTokenClaims(ISSUER, registry.findById("m1")!, TIMES, { ...byId, merchantValue: "login" }).username).toBe("one@shop.test");
  });
});
