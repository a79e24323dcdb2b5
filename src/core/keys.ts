import { createHash, createSecretKey, KeyObject, webcrypto } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, importPKCS8, type CryptoKey as JoseCryptoKey, type JWK } from "jose";
import { ConfigError, type Algorithm } from "./config.js";
import { InternalError } from "./errors.js";
import { printable } from "./printable.js";

/**
 * The signing keys. Keys are generated at start unless one is given by configuration, so several
 * replicas can share one (and then also share the `kid`, which is the key's RFC 7638 thumbprint).
 * Keys are imported once, as CryptoKeys, never per request. Each key carries its algorithm, and a
 * token is verified with its key's algorithm, never the one the token names. A start key may still
 * be on its way when the sandbox starts answering (`KeyRing.ready`): what signs or verifies waits
 * for it, the rest does not.
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
 * Where a ring's new keys come from: generated (`generateSigningKey`) unless a source is given.
 * Only the test helpers give one (keys made once per test run, `test/support/keys.ts`); it must
 * never return a key twice to one ring, as two generated keys never share a kid.
 */
export type KeySource = (alg: Algorithm) => Promise<SigningKey>;

/**
 * Every key of one sandbox, by `kid`. Scenarios that sign with the same algorithm share one start
 * key (generated once, or the configured one), so loading many scenarios costs no extra key
 * generation; a scenario that rotates gets keys of its own, and gives them back (`retire`) when it
 * no longer accepts them or ends, so session churn does not grow the ring.
 */
export class KeyRing {
  /** How many kids of ended scenarios are remembered (about 100 bytes each; the keys themselves are gone). */
  static readonly MAX_ENDED = 4096;
  /**
   * How many keys that left the ring (their scenario ended, or a rotation dropped them) are kept to
   * verify what they signed, for the log scan only (`verifier`): the tokens a test logged are
   * found after its session ended. Nothing else sees them: the ring no longer signs nor accepts with them.
   */
  static readonly MAX_RETIRED_VERIFIERS = 1024;
  private readonly byKid = new Map<string, SigningKey>();
  /** Verification keys of keys that left the ring, oldest first. */
  private readonly retired = new Map<string, VerifyingKey>();
  private readonly startKeys = new Map<Algorithm, Promise<SigningKey>>();
  /** Kids of keys whose scenario (a session) ended, oldest first: see `endedKid`. */
  private readonly ended = new Set<string>();
  /** The keys still on their way that `ready` waits for; undefined once all are in. */
  private arriving: Promise<void> | undefined;

  /**
   * @param configured A key given by configuration, used as the start key of its algorithm.
   * @param pregenerated A start key already being generated (the CLI starts it while loading).
   * @param source Where generated keys come from (tests only): see KeySource.
   */
  constructor(
    private readonly configured?: { alg: Algorithm; text: string },
    private readonly pregenerated?: { alg: Algorithm; key: Promise<SigningKey> },
    private readonly source: KeySource = generateSigningKey,
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
            : this.source(alg);
      key = source.then((k) => {
        this.byKid.set(k.kid, k);
        return k;
      });
      this.startKeys.set(alg, key);
    }
    return key;
  }

  /**
   * While a key that scenarios sign with is still being made (see `expect`), the promise of its
   * arrival, which rejects with the error if it cannot be made; undefined once every key is in. A
   * caller that signs or verifies tests it and awaits only while it is set, so once the keys are
   * in, nothing waits per request.
   */
  get ready(): Promise<void> | undefined {
    return this.arriving;
  }

  /**
   * Makes `ready` wait for one more key on its way (a start key createSandbox did not wait for).
   * A key that cannot be made leaves `ready` rejected for good: every later caller hears why,
   * none hangs.
   */
  expect(arrival: Promise<unknown>): void {
    const all: Promise<void> = Promise.all([this.arriving, arrival]).then(
      () => {
        if (this.arriving === all) this.arriving = undefined;
      },
      (e: unknown) => {
        // The first failure as it came; a later key's failure is not news.
        if (e instanceof InternalError) throw e;
        throw new InternalError(
          `The sandbox's signing key could not be generated (${printable(e instanceof Error ? e.message : String(e), 200)}), so it can neither sign nor verify tokens. Restart the sandbox.`,
        );
      },
    );
    // Handled here, so a failure nobody is waiting for yet is not an unhandled rejection: the
    // callers that await `ready` (and the CLI, which stops the server) still get the error.
    all.catch(() => undefined);
    this.arriving = all;
  }

  async generate(alg: Algorithm): Promise<SigningKey> {
    const key = await this.source(alg);
    this.byKid.set(key.kid, key);
    return key;
  }

  /** A new key that never joins this ring: a token signed with it is one this sandbox did not make (minting's foreign_key). */
  outsider(alg: Algorithm): Promise<SigningKey> {
    return this.source(alg);
  }

  find(kid: string): SigningKey | undefined {
    return this.byKid.get(kid);
  }

  /** How many keys the ring holds (start keys and the keys of rotating scenarios). */
  get size(): number {
    return this.byKid.size;
  }

  /**
   * Drops keys only their scenario used. With `scenarioEnded`, their kids are remembered (bounded):
   * a key of one ended scenario only signed tokens of that scenario's merchants, which are gone,
   * so such a token is still answered "not a merchant of this sandbox", as while the key was kept.
   */
  retire(kids: Iterable<string>, scenarioEnded: boolean): void {
    for (const kid of kids) {
      const key = this.byKid.get(kid);
      if (!key) continue;
      this.byKid.delete(kid);
      this.retired.set(kid, { kid, alg: key.alg, verifyKey: key.verifyKey, publicJwk: key.publicJwk });
      if (this.retired.size > KeyRing.MAX_RETIRED_VERIFIERS) this.retired.delete(this.retired.keys().next().value!);
      if (!scenarioEnded) continue;
      this.ended.add(kid);
      if (this.ended.size > KeyRing.MAX_ENDED) this.ended.delete(this.ended.values().next().value!);
    }
  }

  /**
   * What verifies the signatures of a key this sandbox made, in the ring or retired (the most recent
   * MAX_RETIRED_VERIFIERS): for the log scan, never for accepting a token.
   */
  verifier(kid: string): VerifyingKey | undefined {
    return this.byKid.get(kid) ?? this.retired.get(kid);
  }

  /** How many retired keys are kept to verify (bounded by MAX_RETIRED_VERIFIERS). */
  get retiredCount(): number {
    return this.retired.size;
  }

  /** True for the kid of a key retired when its scenario ended (the most recent MAX_ENDED). */
  endedKid(kid: string): boolean {
    return this.ended.has(kid);
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
 * a new key current; the old one stays accepted only with `keepOld` (an overlap window). Keys the
 * scenario generated are its own: one it stops accepting leaves the ring (its start key stays, as
 * a reset returns to it), and all leave at `release` when the scenario ends.
 */
export class ScenarioKeys {
  /**
   * How many keys one scenario accepts at once (the current one and those `keep_old` kept): a
   * rotation past it retires the oldest, so rotations cannot grow the ring and the JWKS without end.
   */
  static readonly MAX_ACCEPTED = 10;
  /** Both undefined only while the start key is on its way (the ring's `ready` is then set). */
  private start: SigningKey | undefined;
  private currentKey: SigningKey | undefined;
  private readonly acceptedKids = new Set<string>();
  /** Kids of the keys this scenario generated (never a shared start key). */
  private readonly ownKids = new Set<string>();
  private released = false;

  /**
   * @param start The start key, or its promise: the scenario then exists before its key (the
   *   server answers what needs no key at once) and the ring's `ready` waits for the key.
   * @param ownStart The start key was generated for this scenario alone (it rotates).
   */
  constructor(
    private readonly ring: KeyRing,
    start: SigningKey | Promise<SigningKey>,
    private readonly ownStart = false,
  ) {
    if ("then" in start) ring.expect(start.then((key) => this.begin(key)));
    else this.begin(start);
  }

  /** The key the scenario signs with. Only once the ring is `ready`: signing waits for it. */
  get signing(): SigningKey {
    if (this.currentKey === undefined) throw new Error("the signing key is still being made: await the key ring's `ready` first");
    return this.currentKey;
  }

  get accepted(): ReadonlySet<string> {
    return this.acceptedKids;
  }

  accepts(kid: string): boolean {
    return this.acceptedKids.has(kid);
  }

  /**
   * A new key signs; with `keepOld` the keys accepted so far stay accepted (at most MAX_ACCEPTED in
   * all, the oldest leave first). Undefined when the scenario ended while the key was being made:
   * the key leaves the ring at once and nothing changed.
   */
  async rotate(keepOld: boolean): Promise<SigningKey | undefined> {
    if (this.ring.ready) await this.ring.ready;
    if (this.released) return undefined;
    const next = await this.ring.generate(this.signing.alg);
    if (this.released) {
      // `release` ran during the generation and could not know of this key.
      this.ring.retire([next.kid], true);
      return undefined;
    }
    this.ownKids.add(next.kid);
    if (keepOld) this.dropOldest(ScenarioKeys.MAX_ACCEPTED - 1);
    else this.dropAccepted();
    this.acceptedKids.add(next.kid);
    this.currentKey = next;
    return next;
  }

  /** Whether the scenario ended (`release`): a rotation that finishes later changes nothing. */
  get ended(): boolean {
    return this.released;
  }

  /** Back to the start key (a reset): it signs, and only it is accepted. */
  reset(): void {
    // Before the start key is in, nothing has rotated (rotate waits for it): already as started.
    if (this.start === undefined) return;
    this.dropAccepted();
    this.currentKey = this.start;
    this.acceptedKids.add(this.start.kid);
  }

  /** The scenario ended: its own keys leave the ring; shared start keys stay for the others. */
  release(): void {
    this.released = true;
    this.ring.retire(this.ownKids, true);
    this.ownKids.clear();
    this.acceptedKids.clear();
  }

  /** The start key is in: it signs and is accepted (unless the scenario ended while it was made). */
  private begin(start: SigningKey): void {
    if (this.released) {
      if (this.ownStart) this.ring.retire([start.kid], true);
      return;
    }
    this.start = start;
    this.currentKey = start;
    this.acceptedKids.add(start.kid);
    if (this.ownStart) this.ownKids.add(start.kid);
  }

  /**
   * Stops accepting the oldest keys until at most `keep` are left (a Set keeps the order they came
   * in); as in `dropAccepted`, the scenario's own keys but its start key leave the ring.
   */
  private dropOldest(keep: number): void {
    const gone: string[] = [];
    for (const kid of this.acceptedKids) {
      if (this.acceptedKids.size - gone.length <= keep) break;
      gone.push(kid);
    }
    for (const kid of gone) this.acceptedKids.delete(kid);
    this.retireOwn(gone);
  }

  /**
   * Stops accepting every key; the scenario's own keys but its start key leave the ring. A token
   * signed with one is then refused token_unknown_kid by the ring, as the scenario refused it before.
   */
  private dropAccepted(): void {
    this.retireOwn([...this.acceptedKids]);
    this.acceptedKids.clear();
  }

  /** Of keys no longer accepted, those the scenario generated, but its start key (a reset returns to it), leave the ring. */
  private retireOwn(kids: string[]): void {
    const gone = kids.filter((kid) => kid !== this.start?.kid && this.ownKids.has(kid));
    for (const kid of gone) this.ownKids.delete(kid);
    this.ring.retire(gone, false);
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
