import { SignJWT, compactVerify, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { signCompactJws } from "../../src/core/jws.js";
import { generateSigningKey, importSigningKey } from "../../src/core/keys.js";

// The sandbox signs its tokens with node:crypto (jws.ts) and verifies them with jose: every
// signature it makes must be one jose accepts, byte for byte what jose would have made where the
// algorithm is deterministic.
const claims = { iss: "https://merchant-sandbox.test", sub: "m_1", aud: "merchant-api", iat: 1767225600, exp: 1767229200, jti: "tok_1", scope: "payment" };

describe("signCompactJws", () => {
  it("HS256: the same bytes as jose's SignJWT", async () => {
    const key = await importSigningKey("HS256", "0123456789abcdef0123456789abcdef");
    const header = { alg: "HS256" as const, kid: key.kid, typ: "at+jwt" };
    const ours = await signCompactJws(header, claims, key);
    const jose = await new SignJWT(claims).setProtectedHeader(header).sign(new TextEncoder().encode("0123456789abcdef0123456789abcdef"));
    expect(ours).toBe(jose);
  });

  for (const alg of ["RS256", "ES256"] as const) {
    it(`${alg}: jose verifies it with the public key, header and payload as given`, async () => {
      const key = await generateSigningKey(alg);
      const token = await signCompactJws({ alg, kid: key.kid, typ: "at+jwt" }, claims, key);
      const { payload, protectedHeader } = await compactVerify(token, key.verifyKey, { algorithms: [alg] });
      expect(protectedHeader).toEqual({ alg, kid: key.kid, typ: "at+jwt" });
      expect(JSON.parse(new TextDecoder().decode(payload))).toEqual(claims);
    });
  }

  it("ES256: the signature is r || s (64 bytes), not DER", async () => {
    const key = await generateSigningKey("ES256");
    const token = await signCompactJws({ alg: "ES256", kid: key.kid, typ: "at+jwt" }, claims, key);
    expect(Buffer.from(token.split(".")[2]!, "base64url")).toHaveLength(64);
    expect(decodeProtectedHeader(token).alg).toBe("ES256");
  });

  it("a token signed by another key of the same algorithm does not verify", async () => {
    const [a, b] = [await generateSigningKey("RS256"), await generateSigningKey("RS256")];
    const token = await signCompactJws({ alg: "RS256", kid: a.kid, typ: "at+jwt" }, claims, a);
    await expect(compactVerify(token, b.verifyKey, { algorithms: ["RS256"] })).rejects.toThrow("signature verification failed");
  });
});
