import { createHash, createSecretKey, KeyObject, webcrypto } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, importPKCS8, type CryptoKey as JoseCryptoKey, type JWK } from "jose";
import { ALGORITHMS, ConfigError, type Algorithm } from "./config.js";

/**
 * One signing key: generated, or imported from configuration (a PKCS#8 PEM, a private JWK, an
 * HS256 secret), once, as a CryptoKey and the KeyObject node:crypto signs with; its `kid` is its
 * RFC 7638 thumbprint, so replicas given one key share the kid too.
 */

export interface SigningKey {
  readonly kid: string;
  readonly alg: Algorithm;
  readonly privateKey: JoseCryptoKey | Uint8Array;
  readonly verifyKey: JoseCryptoKey | Uint8Array;
  /** The private (or secret) key as node:crypto signs with it: see jws.ts. */
  readonly signer: KeyObject;
  /** The public JWK published at /.well-known/jwks.json; undefined for a symmetric (HS256) key. */
  readonly publicJwk: JWK | undefined;
}

/**
 * What verifies a key's signatures: its public key (RS256, ES256), or for HS256 the key itself,
 * which is the only way to check an HMAC.
 */
export type VerifyingKey = Pick<SigningKey, "kid" | "alg" | "verifyKey" | "publicJwk">;

/**
 * A new key. `extractable`: its private key may leave the process (`exportSigningKey`), for
 * replicas that share their keys; otherwise it never does.
 */
export async function generateSigningKey(alg: Algorithm, options: { extractable?: boolean } = {}): Promise<SigningKey> {
  if (alg === "HS256") return hmacKey(webcrypto.getRandomValues(new Uint8Array(32)));
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: options.extractable ?? false });
  return asymmetricKey(alg, privateKey, publicKey);
}

/**
 * A key as replicas share it, private part included (so never logged): `{kid, alg, jwk}` with the
 * private JWK, or `{kid, alg, secret}` with an HS256 key's bytes in base64url. Synchronous: it
 * reads the KeyObject the key signs with.
 */
export function exportSigningKey(key: SigningKey): string {
  if (key.alg === "HS256") return JSON.stringify({ kid: key.kid, alg: key.alg, secret: key.signer.export().toString("base64url") });
  return JSON.stringify({ kid: key.kid, alg: key.alg, jwk: key.signer.export({ format: "jwk" }) });
}

/**
 * The key `exportSigningKey` gave, as it was (same kid). Asynchronous: a CryptoKey is imported.
 * Throws an Error naming what is wrong (never the key material) for a JSON that is not one.
 */
export async function importSharedKey(json: string): Promise<SigningKey> {
  const fail = (why: string) => new Error(`a shared signing key ${why}; it must be what exportSigningKey made`);
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    throw fail("is not JSON");
  }
  const { kid, alg, jwk, secret } = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
  if (typeof kid !== "string" || !(ALGORITHMS as readonly unknown[]).includes(alg)) throw fail("has no kid or no known alg");
  let key: SigningKey;
  try {
    if (alg === "HS256") {
      if (typeof secret !== "string") throw fail(`'${kid}' has no secret`);
      key = await hmacKey(Buffer.from(secret, "base64url"));
    } else {
      if (typeof jwk !== "object" || jwk === null || !("d" in jwk)) throw fail(`'${kid}' has no private JWK`);
      key = await fromPrivateJwk(alg as Algorithm, jwk as JWK);
    }
  } catch (e) {
    if (e instanceof Error && e.message.startsWith("a shared signing key")) throw e;
    throw fail(`'${kid}' cannot be imported (${(e as Error).message})`);
  }
  if (key.kid !== kid) throw fail(`'${kid}' holds the key of kid '${key.kid}'`);
  return key;
}

async function fromPrivateJwk(alg: Algorithm, jwk: JWK): Promise<SigningKey> {
  const privateKey = (await importJWK({ ...jwk, alg }, alg, { extractable: true })) as JoseCryptoKey;
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
  const publicKey = (await importJWK({ ...pub, alg }, alg)) as JoseCryptoKey;
  return asymmetricKey(alg, privateKey, publicKey);
}

export async function importSigningKey(alg: Algorithm, text: string): Promise<SigningKey> {
  if (alg === "HS256") {
    const bytes = new TextEncoder().encode(text);
    if (bytes.length < 32) throw new ConfigError("an HS256 signing key must be at least 32 bytes long (RFC 7518 §3.2)");
    return hmacKey(bytes);
  }
  try {
    const trimmed = text.trim();
    if (trimmed.startsWith("{")) {
      const jwk = JSON.parse(trimmed) as JWK;
      if (!jwk.d) throw new ConfigError("the signing key JWK has no private part ('d'); give the private key");
      return await fromPrivateJwk(alg, jwk);
    }
    const privateKey = await importPKCS8(trimmed, alg, { extractable: true });
    const jwk = await exportJWK(privateKey);
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
    const publicKey = (await importJWK({ ...pub, alg }, alg)) as JoseCryptoKey;
    return asymmetricKey(alg, privateKey, publicKey);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(
      `the signing key is not a usable ${alg} private key (${(e as Error).message}); give a PKCS#8 PEM ('-----BEGIN PRIVATE KEY-----') or a private JWK as JSON`,
    );
  }
}

async function asymmetricKey(alg: Algorithm, privateKey: JoseCryptoKey, publicKey: JoseCryptoKey): Promise<SigningKey> {
  const signer = KeyObject.from(privateKey as unknown as webcrypto.CryptoKey);
  refuseShortRsaKey(alg, signer);
  const exported = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(exported);
  return { kid, alg, privateKey, verifyKey: publicKey, signer, publicJwk: { ...exported, kid, alg, use: "sig" } };
}

/**
 * jose refuses to verify (and to sign) with an RSA key under 2048 bits, and jws-verify must reject
 * exactly what jose rejects; refusing such a key when it comes in means no token of it ever exists.
 */
function refuseShortRsaKey(alg: Algorithm, key: KeyObject): void {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType === "rsa" && bits !== undefined && bits < 2048) {
    throw new ConfigError(
      `the signing key is an RSA key of ${bits} bits; ${alg} needs an RSA key of 2048 bits or more (RFC 7518 §3.3): generate one with \`openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048\``,
    );
  }
}

async function hmacKey(secret: Uint8Array): Promise<SigningKey> {
  // Imported once as a CryptoKey: jose re-imports a Uint8Array on every call, halving HS256 throughput.
  const key = (await webcrypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ])) as unknown as JoseCryptoKey;
  const kid = "hs-" + createHash("sha256").update(secret).digest("base64url").slice(0, 16);
  return { kid, alg: "HS256", privateKey: key, verifyKey: key, signer: createSecretKey(secret), publicJwk: undefined };
}
