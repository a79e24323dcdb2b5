import type { KeyRing, SigningKey } from "./keys.js";

/**
 * A scenario's keys as replicas share them, by kid (the ring holds the keys themselves, shared on
 * their own): the start key, the one that signs, those accepted (oldest first) and its own.
 * `start` and `current` are absent only while the start key is on its way.
 */
export interface ScenarioKeysState {
  readonly start?: string;
  readonly current?: string;
  readonly accepted: readonly string[];
  readonly own: readonly string[];
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

  toState(): ScenarioKeysState {
    const state: { start?: string; current?: string; accepted: string[]; own: string[] } = {
      accepted: [...this.acceptedKids],
      own: [...this.ownKids],
    };
    if (this.start) state.start = this.start.kid;
    if (this.currentKey) state.current = this.currentKey.kid;
    return state;
  }

  /**
   * Takes the state another replica's copy of this scenario had (`toState`): every kid it names must
   * be in the ring (absorbed first), else this throws and nothing changed. Keys this scenario made
   * that the state no longer names leave the ring, as they left there.
   */
  restore(state: ScenarioKeysState): void {
    if (this.released) throw new Error("the scenario ended: its keys take no state any more");
    const kids = (list: unknown, what: string) => {
      if (!Array.isArray(list) || !list.every((kid) => typeof kid === "string")) {
        throw new TypeError(`a scenario's keys state needs ${what}: a list of kids; give what ScenarioKeys.toState() returned`);
      }
      return list as string[];
    };
    const accepted = kids(state.accepted, "accepted");
    const own = kids(state.own, "own");
    if ((state.start === undefined) !== (state.current === undefined)) {
      throw new TypeError("a scenario's keys state has both a start and a current kid, or neither (its start key was still on its way)");
    }
    // Before anything changes: a kid the ring lacks leaves this scenario as it was.
    const start = state.start === undefined ? undefined : this.ring.held(state.start);
    const current = state.current === undefined ? undefined : this.ring.held(state.current);
    for (const kid of accepted) this.ring.held(kid);
    for (const kid of own) this.ring.held(kid);
    if (start === undefined) return;
    const gone = [...this.ownKids].filter((kid) => !own.includes(kid));
    this.start = start;
    this.currentKey = current;
    this.acceptedKids.clear();
    for (const kid of accepted) this.acceptedKids.add(kid);
    this.ownKids.clear();
    for (const kid of own) this.ownKids.add(kid);
    this.ring.retire(gone, false);
  }

  /** The start key is in: it signs and is accepted (unless the scenario ended while it was made). */
  private begin(start: SigningKey): void {
    if (this.released) {
      if (this.ownStart) this.ring.retire([start.kid], true);
      return;
    }
    if (this.start !== undefined) {
      // A state restored while this key was being made already chose the scenario's keys.
      if (this.ownStart && !this.ownKids.has(start.kid)) this.ring.retire([start.kid], false);
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
