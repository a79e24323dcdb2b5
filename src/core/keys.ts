import { createHash, createSecretKey, KeyObject, webcrypto } from "node:crypto";
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
 * Keys are imported once, as CryptoKeys, never per request. Each key carries its algorithm, and a
 * token is verified with its key's algorithm, never the one the token names.
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
 * Every key of one sandbox, by `kid`. Scenarios that sign with the same algorithm share one start
 * key (generated once, or the configured one), so loading many scenarios costs no extra key
 * generation; a scenario that rotates gets keys of its own.
 */
export class KeyRing {
  private readonly byKid = new Map<string, SigningKey>();
  private readonly startKeys = new Map<Algorithm, Promise<SigningKey>>();

  /**
   * @param configured A key given by configuration, used as the start key of its algorithm.
   * @param pregenerated A start key already being generated (the CLI starts it while loading).
   */
  constructor(
    private readonly configured?: { alg: Algorithm; text: string },
    private readonly pregenerated?: { alg: Algorithm; key: Promise<SigningKey> },
  ) {}

  /** The start key for an algorithm: the configured one if it is of that algorithm, else generated once. */
  startKey(alg: Algorithm): Promise<SigningKey> {
    let key = this.startKeys.get(alg);
    if (!key) {
      const source =
        this.configured?.alg === alg
          ? importSigningKey(alg, this.configured.text)
          : this.pregenerated?.alg === alg
            ? this.pregenerated.key
            : generateSigningKey(alg);
      key = source.then((k) => {
        this.byKid.set(k.kid, k);
        return k;
      });
      this.startKeys.set(alg, key);
    }
    return key;
  }

  async generate(alg: Algorithm): Promise<SigningKey> {
    const key = await generateSigningKey(alg);
    this.byKid.set(key.kid, key);
    return key;
  }

  find(kid: string): SigningKey | undefined {
    return this.byKid.get(kid);
  }

  /** The algorithms of the keys in the ring: the allow-list for verification. */
  hasAlgorithm(alg: string): boolean {
    for (const key of this.byKid.values()) if (key.alg === alg) return true;
    return false;
  }

  /** The algorithms in use, sorted: for messages. */
  algorithms(): string[] {
    return [...new Set([...this.byKid.values()].map((k) => k.alg))].sort();
  }

  /** The JSON Web Key Set of the given asymmetric keys. */
  jwks(kids: Iterable<string>): { keys: JWK[] } {
    const keys: JWK[] = [];
    for (const kid of kids) {
      const jwk = this.byKid.get(kid)?.publicJwk;
      if (jwk) keys.push(jwk);
    }
    return { keys };
  }
}

/**
 * The keys of one scenario: the current signing key and the set it still accepts. Rotation makes
 * a new key current; the old one stays accepted only with `keepOld` (an overlap window).
 */
export class ScenarioKeys {
  private currentKey: SigningKey;
  private readonly acceptedKids: Set<string>;

  constructor(
    private readonly ring: KeyRing,
    start: SigningKey,
  ) {
    this.currentKey = start;
    this.acceptedKids = new Set([start.kid]);
  }

  get signing(): SigningKey {
    return this.currentKey;
  }

  get accepted(): ReadonlySet<string> {
    return this.acceptedKids;
  }

  accepts(kid: string): boolean {
    return this.acceptedKids.has(kid);
  }

  async rotate(keepOld: boolean): Promise<SigningKey> {
    const next = await this.ring.generate(this.currentKey.alg);
    if (!keepOld) this.acceptedKids.clear();
    this.acceptedKids.add(next.kid);
    this.currentKey = next;
    return next;
  }

  /** Back to one key (a reset): that key signs, and only it is accepted. */
  resetTo(key: SigningKey): void {
    this.currentKey = key;
    this.acceptedKids.clear();
    this.acceptedKids.add(key.kid);
  }
}

export async function generateSigningKey(alg: Algorithm): Promise<SigningKey> {
  if (alg === "HS256") return hmacKey(webcrypto.getRandomValues(new Uint8Array(32)));
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: false });
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
  const signer = KeyObject.from(privateKey as unknown as webcrypto.CryptoKey);
  return { kid, alg, privateKey, verifyKey: publicKey, signer, publicJwk: { ...exported, kid, alg, use: "sig" } };
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
