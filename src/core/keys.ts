import { createHash, webcrypto } from "node:crypto";
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type CryptoKey as JoseCryptoKey,
  type JWK,
} from "jose";
import { ConfigError, type Algorithm } from "./config.js";

/**
 * The signing keys. Keys are generated at start unless one is given by configuration, so several
 * replicas can share one (and then also share the `kid`, which is the key's RFC 7638 thumbprint).
 * Keys are imported once, as CryptoKeys, never per request.
 */

export interface SigningKey {
  readonly kid: string;
  readonly alg: Algorithm;
  readonly privateKey: JoseCryptoKey | Uint8Array;
  readonly verifyKey: JoseCryptoKey | Uint8Array;
  /** The public JWK published at /.well-known/jwks.json; undefined for a symmetric (HS256) key. */
  readonly publicJwk: JWK | undefined;
}

export class KeyStore {
  private current: SigningKey;
  private readonly byKid = new Map<string, SigningKey>();

  private constructor(first: SigningKey) {
    this.current = first;
    this.byKid.set(first.kid, first);
  }

  /** Builds the store from a configured key (PEM, JWK JSON or HS256 secret) or a fresh one. */
  static async create(alg: Algorithm, configuredKey?: string): Promise<KeyStore> {
    const key = configuredKey === undefined ? await generateSigningKey(alg) : await importSigningKey(alg, configuredKey);
    return new KeyStore(key);
  }

  get signing(): SigningKey {
    return this.current;
  }

  /** The key for a `kid`, among the current one and any kept after a rotation. */
  find(kid: string): SigningKey | undefined {
    return this.byKid.get(kid);
  }

  /** Makes a new key current; the old one stays verifiable only if `keepOld`. */
  async rotate(keepOld: boolean): Promise<SigningKey> {
    const next = await generateSigningKey(this.current.alg);
    if (!keepOld) this.byKid.delete(this.current.kid);
    this.current = next;
    this.byKid.set(next.kid, next);
    return next;
  }

  /** The JSON Web Key Set of every asymmetric key that still verifies. */
  jwks(): { keys: JWK[] } {
    return { keys: [...this.byKid.values()].flatMap((k) => (k.publicJwk ? [k.publicJwk] : [])) };
  }
}

export async function generateSigningKey(alg: Algorithm): Promise<SigningKey> {
  if (alg === "HS256") return hmacKey(webcrypto.getRandomValues(new Uint8Array(32)));
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: false });
  return asymmetricKey(alg, privateKey, publicKey);
}

async function importSigningKey(alg: Algorithm, text: string): Promise<SigningKey> {
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
      const privateKey = (await importJWK({ ...jwk, alg }, alg)) as JoseCryptoKey;
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
      const publicKey = (await importJWK({ ...pub, alg }, alg)) as JoseCryptoKey;
      return asymmetricKey(alg, privateKey, publicKey);
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
  const exported = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(exported);
  return { kid, alg, privateKey, verifyKey: publicKey, publicJwk: { ...exported, kid, alg, use: "sig" } };
}

async function hmacKey(secret: Uint8Array): Promise<SigningKey> {
  // Imported once as a CryptoKey: jose re-imports a Uint8Array on every call, halving HS256 throughput.
  const key = (await webcrypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ])) as unknown as JoseCryptoKey;
  const kid = "hs-" + createHash("sha256").update(secret).digest("base64url").slice(0, 16);
  return { kid, alg: "HS256", privateKey: key, verifyKey: key, publicJwk: undefined };
}
