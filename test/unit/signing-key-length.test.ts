import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSandbox } from "../../src/index.js";
import { ConfigError } from "../../src/core/config.js";
import { importSigningKey } from "../../src/core/keys.js";

// jose neither signs nor verifies with an RSA key under 2048 bits; the sandbox refuses such a key
// when it is loaded, so no token of it exists for jws-verify and jose to disagree about.
const message =
  "the signing key is an RSA key of 1024 bits; RS256 needs an RSA key of 2048 bits or more (RFC 7518 §3.3): generate one with `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`";
const rsa = (bits: number) => generateKeyPairSync("rsa", { modulusLength: bits }).privateKey;

describe("importSigningKey: RSA key length", () => {
  it("refuses a 1024-bit PKCS#8 PEM with a ConfigError saying how to fix it", async () => {
    const pem = rsa(1024).export({ type: "pkcs8", format: "pem" }) as string;
    const refusal = importSigningKey("RS256", pem);
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refusal).rejects.toThrow(message);
  });

  it("refuses a 1024-bit private JWK the same way", async () => {
    const jwk = JSON.stringify(rsa(1024).export({ format: "jwk" }));
    const refusal = importSigningKey("RS256", jwk);
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refusal).rejects.toThrow(message);
  });

  it("refuses it given to the library, createSandbox({ signingKey }), at start", async () => {
    const pem = rsa(1024).export({ type: "pkcs8", format: "pem" }) as string;
    const refusal = createSandbox({ signingKey: pem });
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refusal).rejects.toThrow(message);
  });

  it("accepts a 2048-bit key", async () => {
    const key = await importSigningKey("RS256", rsa(2048).export({ type: "pkcs8", format: "pem" }) as string);
    expect(key.alg).toBe("RS256");
    expect(key.signer.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });
});
