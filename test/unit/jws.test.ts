import { CompactSign, SignJWT, compactVerify, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { isHighS, toLowS } from "../../src/core/ecdsa.js";
import { encodeJwsHeader, signCompactJws, signWithEncodedHeader } from "../../src/core/jws.js";
import { generateSigningKey, importSigningKey } from "../../src/core/keys.js";

// The sandbox signs its tokens with node:crypto (jws.ts) and verifies them with jose: every
// signature it makes must be one jose accepts, byte for byte what jose would have made where the
// algorithm is deterministic.
const claims = {
  iss: "https://merchant-sandbox.test",
  sub: "m_1",
  aud: "merchant-api",
  iat: 1767225600,
  exp: 1767229200,
  jti: "tok_1",
  scope: "payment",
};

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

  it("regression: ES256 signatures were high-S half the time (a second text of the token); now always low-S, and they verify", async () => {
    const key = await generateSigningKey("ES256");
    for (let i = 0; i < 32; i++) {
      const token = await signCompactJws({ alg: "ES256", kid: key.kid, typ: "at+jwt" }, { ...claims, jti: `tok_${i}` }, key);
      expect(isHighS(Buffer.from(token.split(".")[2]!, "base64url")), token).toBe(false);
      await compactVerify(token, key.verifyKey, { algorithms: ["ES256"] });
    }
  });

  for (const alg of ["HS256", "RS256"] as const) {
    it(`${alg}: a header encoded once (the token exchange's way) signs byte for byte what jose's CompactSign makes`, async () => {
      // Both algorithms are deterministic (HMAC, RSASSA-PKCS1-v1_5): the same input, the same text.
      // jose is the independent reference: signCompactJws itself calls signWithEncodedHeader.
      const secret = "0123456789abcdef0123456789abcdef";
      const key = alg === "HS256" ? await importSigningKey("HS256", secret) : await generateSigningKey(alg);
      const joseKey = alg === "HS256" ? new TextEncoder().encode(secret) : key.privateKey;
      const header = { alg, kid: key.kid, typ: "at+jwt" };
      const encoded = encodeJwsHeader(header);
      for (const payload of [claims, { ...claims, jti: "tok_2" }]) {
        const jose = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader(header).sign(joseKey);
        expect(await signWithEncodedHeader(encoded, payload, key)).toBe(jose);
        expect(await signCompactJws(header, payload, key)).toBe(jose);
      }
    });
  }

  it("a token signed by another key of the same algorithm does not verify", async () => {
    const [a, b] = [await generateSigningKey("RS256"), await generateSigningKey("RS256")];
    const token = await signCompactJws({ alg: "RS256", kid: a.kid, typ: "at+jwt" }, claims, a);
    await expect(compactVerify(token, b.verifyKey, { algorithms: ["RS256"] })).rejects.toThrow("signature verification failed");
  });
});

describe("low-S ES256 signatures (ecdsa.ts)", () => {
  const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  const sig = (r: bigint, s: bigint) => Buffer.from(r.toString(16).padStart(64, "0") + s.toString(16).padStart(64, "0"), "hex");

  it("S at n/2 is low, at n/2 + 1 high; toLowS maps S to n − S and leaves r alone", () => {
    const half = N >> 1n;
    expect(isHighS(sig(7n, half))).toBe(false);
    expect(isHighS(sig(7n, half + 1n))).toBe(true);
    expect(toLowS(sig(7n, half + 1n))).toEqual(sig(7n, N - half - 1n));
    expect(toLowS(sig(7n, 5n))).toEqual(sig(7n, 5n));
  });

  it("only a 64-byte r || s is judged (anything else is left to verification)", () => {
    expect(isHighS(Buffer.alloc(63, 0xff))).toBe(false);
    expect(isHighS(Buffer.alloc(65, 0xff))).toBe(false);
  });

  it("the low-S form of a real high-S signature still verifies", async () => {
    const key = await generateSigningKey("ES256");
    const token = await signCompactJws({ alg: "ES256", kid: key.kid, typ: "at+jwt" }, claims, key);
    const [h, p, s] = token.split(".") as [string, string, string];
    const bytes = Buffer.from(s, "base64url");
    const high = sig(BigInt(`0x${bytes.subarray(0, 32).toString("hex")}`), N - BigInt(`0x${bytes.subarray(32).toString("hex")}`));
    expect(isHighS(high)).toBe(true);
    // node (OpenSSL) accepts both forms: the refusal has to be the sandbox's own.
    await compactVerify(`${h}.${p}.${high.toString("base64url")}`, key.verifyKey, { algorithms: ["ES256"] });
    expect(toLowS(high)).toEqual(bytes);
  });
});
