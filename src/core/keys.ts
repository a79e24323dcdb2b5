import { Outbox } from "./outbox.js";
import type { JWK } from "jose";
import type { Algorithm } from "./config.js";
import { InternalError } from "./errors.js";
import { printable } from "./printable.js";
import { exportSigningKey, generateSigningKey, importSharedKey, importSigningKey, type SigningKey, type VerifyingKey } from "./signing-keys.js";

/**
 * The signing keys. Keys are generated at start unless one is given by configuration, so several
 * replicas can share one (and then also share the `kid`, which is the key's RFC 7638 thumbprint).
 * Keys are imported once, as CryptoKeys, never per request. Each key carries its algorithm, and a
 * token is verified with its key's algorithm, never the one the token names. A start key may still
 * be on its way when the sandbox starts answering (`KeyRing.ready`): what signs or verifies waits
 * for it, the rest does not.
 */

export {
  exportSigningKey,
  generateSigningKey,
  importSharedKey,
  importSigningKey,
  type SigningKey,
  type VerifyingKey,
} from "./signing-keys.js";

/** A key as replicas share it: its kid, and its JSON (`exportSigningKey`; secret). */
export interface SharedKey {
  readonly kid: string;
  readonly json: string;
}

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
   * How many keys other replicas made (`absorbKeys`) wait for a scenario here to use them (`held`):
   * past it, the oldest of those are kept only to verify (as retired keys), so keys of scenarios
   * this replica never uses (rotated away or ended before it synced) cannot grow the ring.
   */
  static readonly MAX_UNCLAIMED = 1024;
  /** The kid of each start key that is in, by algorithm. */
  private readonly startKidOf = new Map<Algorithm, string>();
  /** The kid of the configured key: it is each replica's by configuration, never shared. */
  private configuredKid: string | undefined;
  /** Keys made here on their way to a commit (`takeNewKeys`); closed until `shareKeys`. */
  private readonly newKeys = new Outbox<SigningKey>();
  /**
   * Absorbed keys no scenario here has used yet, oldest first: outside the ring (not found, not
   * published, no algorithm of its) until one does, as they are outside it on a replica that let
   * them go.
   */
  private readonly waiting = new Map<string, SigningKey>();
  /** The keys other replicas made: theirs to share, never this ring's. */
  private readonly absorbed = new WeakSet<SigningKey>();
  private readonly source: KeySource;

  /**
   * @param configured A key given by configuration, used as the start key of its algorithm.
   * @param pregenerated A start key already being generated (the CLI starts it while loading).
   * @param source Where generated keys come from (tests only): see KeySource.
   */
  constructor(
    private readonly configured?: { alg: Algorithm; text: string },
    private readonly pregenerated?: { alg: Algorithm; key: Promise<SigningKey> },
    source?: KeySource,
  ) {
    this.source = source ?? ((alg) => generateSigningKey(alg, { extractable: this.newKeys.isOpen }));
  }

  /** The start key for an algorithm: the configured one if it is of that algorithm, else generated once. */
  startKey(alg: Algorithm): Promise<SigningKey> {
    let key = this.startKeys.get(alg);
    if (!key) {
      const configured = this.configured?.alg === alg;
      const source = configured
        ? importSigningKey(alg, this.configured!.text)
        : this.pregenerated?.alg === alg
          ? this.pregenerated.key
          : this.source(alg);
      const made: Promise<SigningKey> = source.then((k) => {
        this.byKid.set(k.kid, k);
        // A start key another replica made may have been adopted meanwhile: it stays the start key.
        if (this.startKeys.get(alg) === made) this.startKidOf.set(alg, k.kid);
        if (configured) this.configuredKid = k.kid;
        else this.madeHere(k);
        return k;
      });
      key = made;
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
    this.madeHere(key);
    return key;
  }

  /** A new key that never joins this ring: a token signed with it is one this sandbox did not make (minting's foreign_key). */
  outsider(alg: Algorithm): Promise<SigningKey> {
    return this.source(alg);
  }

  find(kid: string): SigningKey | undefined {
    return this.byKid.get(kid);
  }

  /**
   * The key of `kid` for a scenario restored from another replica's state: it is used here now.
   * Throws when the ring lacks it: the keys must be absorbed before the states that name them.
   */
  held(kid: string): SigningKey {
    const held = this.byKid.get(kid);
    if (held) return held;
    const key = this.waiting.get(kid);
    if (!key) {
      throw new Error(
        `the key ring holds no key '${printable(kid, 80)}' that a shared scenario state names; absorb the shared keys (absorbKeys) before restoring the states`,
      );
    }
    this.waiting.delete(kid);
    this.byKid.set(kid, key);
    return key;
  }

  /**
   * From now on, keeps each key made here (start keys and rotations, not the configured key, which
   * each replica is given) for `takeNewKeys`, and generates them extractable. The keys made so far
   * are the first taken.
   */
  shareKeys(sink?: (key: SigningKey) => boolean): void {
    const madeSoFar = this.newKeys.isOpen ? [] : [...this.byKid.values()].filter((k) => k.kid !== this.configuredKid && !this.absorbed.has(k));
    this.newKeys.open(sink, madeSoFar);
  }

  /** The keys made since the last take, oldest first, as JSON (secret: never log it); empty unless `shareKeys`. */
  takeNewKeys(): SharedKey[] {
    return this.newKeys.take().map((key) => ({ kid: key.kid, json: exportSigningKey(key) }));
  }

  /** A key made here: for the request that made it (its sink), or for `takeNewKeys`. */
  private madeHere(key: SigningKey): void {
    this.newKeys.put(key);
  }

  /** Keys taken whose commit failed: taken again, first, by the next commit (those still held). */
  requeueKeys(keys: readonly SharedKey[]): void {
    this.newKeys.requeue(keys.map((k) => this.byKid.get(k.kid)).filter((k): k is SigningKey => k !== undefined));
  }

  /**
   * Adds the keys other replicas made (`takeNewKeys`' JSON), each once: a kid the ring holds, or
   * held and let go, is skipped without importing anything, so a batch of known keys costs no
   * more than reading their kids. Rejects, once the others are in, naming the keys it could not read.
   */
  absorbKeys(jsons: readonly string[]): Promise<void> {
    const fresh = jsons.filter((json) => {
      const kid = kidOf(json);
      return kid === undefined || !(this.byKid.has(kid) || this.waiting.has(kid) || this.retired.has(kid) || this.ended.has(kid));
    });
    if (fresh.length === 0) return Promise.resolve();
    return Promise.allSettled(fresh.map(importSharedKey)).then((results) => {
      const problems: string[] = [];
      for (const r of results) {
        if (r.status === "rejected") problems.push((r.reason as Error).message);
        else if (!this.byKid.has(r.value.kid) && !this.waiting.has(r.value.kid)) this.takeIn(r.value);
      }
      if (problems.length > 0) throw new Error(`${problems.length} shared signing key(s) could not be absorbed: ${problems.join("; ")}`);
    });
  }

  private takeIn(key: SigningKey): void {
    this.absorbed.add(key);
    this.waiting.set(key.kid, key);
    if (this.waiting.size <= KeyRing.MAX_UNCLAIMED) return;
    const oldest = this.waiting.values().next().value!;
    this.waiting.delete(oldest.kid);
    this.keepVerifier(oldest);
  }

  /** The kid of each start key made (or adopted) so far, by algorithm, in algorithm order. */
  startKids(): Record<string, string> {
    const kids: Record<string, string> = {};
    for (const alg of [...this.startKidOf.keys()].sort()) kids[alg] = this.startKidOf.get(alg)!;
    return kids;
  }

  /**
   * Makes the ring's key `kid` (absorbed from the replica that made it) the start key of `alg`:
   * scenarios made from now on start on it. Throws when the ring lacks it or it is of another algorithm.
   */
  adoptStartKey(alg: Algorithm, kid: string): void {
    const key = this.held(kid);
    if (key.alg !== alg) throw new Error(`the key '${printable(kid, 80)}' is an ${key.alg} key, not an ${alg} start key`);
    this.startKeys.set(alg, Promise.resolve(key));
    this.startKidOf.set(alg, kid);
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
      this.keepVerifier(key);
      if (!scenarioEnded) continue;
      this.ended.add(kid);
      if (this.ended.size > KeyRing.MAX_ENDED) this.ended.delete(this.ended.values().next().value!);
    }
  }

  private keepVerifier(key: SigningKey): void {
    this.retired.set(key.kid, { kid: key.kid, alg: key.alg, verifyKey: key.verifyKey, publicJwk: key.publicJwk });
    if (this.retired.size > KeyRing.MAX_RETIRED_VERIFIERS) this.retired.delete(this.retired.keys().next().value!);
  }

  /**
   * What verifies the signatures of a key this sandbox made, in the ring, absorbed, or retired (the most recent
   * MAX_RETIRED_VERIFIERS): for the log scan, never for accepting a token.
   */
  verifier(kid: string): VerifyingKey | undefined {
    return this.byKid.get(kid) ?? this.waiting.get(kid) ?? this.retired.get(kid);
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

/** The kid at the head of a key's JSON (exportSigningKey writes it first), read without parsing the key. */
function kidOf(json: string): string | undefined {
  return /^\{"kid":"([^"\\]+)"/.exec(json)?.[1];
}
