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
