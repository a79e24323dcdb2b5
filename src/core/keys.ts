import type { JWK } from "jose";
import type { Algorithm } from "./config.js";
import { InternalError } from "./errors.js";
import { printable } from "./printable.js";
import { generateSigningKey, importSigningKey, type SigningKey, type VerifyingKey } from "./signing-keys.js";

/**
 * The signing keys. Keys are generated at start unless one is given by configuration, so several
 * replicas can share one (and then also share the `kid`, which is the key's RFC 7638 thumbprint).
 * Keys are imported once, as CryptoKeys, never per request. Each key carries its algorithm, and a
 * token is verified with its key's algorithm, never the one the token names. A start key may still
 * be on its way when the sandbox starts answering (`KeyRing.ready`): what signs or verifies waits
 * for it, the rest does not.
 */

export { generateSigningKey, importSigningKey, type SigningKey, type VerifyingKey } from "./signing-keys.js";

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
