import { SecretAutomaton } from "./secret-automaton.js";

/**
 * The secrets of the loaded merchants (api_secret, login password, payment token) and the admin
 * token, indexed so the redaction of every request's URL (redact.ts) finds them in one pass: an
 * Aho–Corasick automaton over all of them (secret-automaton.ts), so the cost of a URL does not
 * depend on how many secrets there are nor on how many lengths they have.
 *
 * Merchants come and go (sessions), so the index counts how many merchants hold each value, and
 * a change costs amortized O(log n) secret builds whatever the number of merchants (5,000 live
 * sessions hold 15,000 secrets; building one automaton anew after each change made every session
 * creation cost O(n)):
 * - automata are immutable, and a view keeps the ones it was taken with. The secrets are in levels
 *   of decreasing size (Tables below): the secrets added since the last view become a level when
 *   the next view is taken, merged with every smaller level. A view taken earlier therefore misses
 *   a secret added since: a request that waited for its body redacts with `unionOf` its arrival
 *   view and the view of the moment it is handled;
 * - a secret no merchant holds any more stays in its automaton, stamped with the generation it
 *   went at, and a view sees only what was still held when it was taken. A request that took its
 *   view before a session ended (an idle one is reaped while its request is read) still redacts
 *   that session's secrets in its own log line, as a snapshot would;
 *   A merge of levels leaves them out; once they outnumber the held secrets, everything is built
 *   anew from the held ones (views already taken keep the old automata): amortized O(1) per
 *   removal, and the memory of ended sessions goes back.
 */

/** Below this length a secret is redacted only where it is a whole path segment or query key/value:
 * searched anywhere, a 4-character password would redact pieces of every URL. */
export const MIN_ANYWHERE_LENGTH = 8;

/** A set of secrets as the redaction reads it (a Set is one). */
export interface SecretSet {
  has(secret: string): boolean;
  /** 0 when it holds none (it may count a few it no longer holds). */
  readonly size: number;
}

/** The automata of one level of the index, built when first searched. */
export interface SecretAutomata {
  /** Secrets made only of URL-unreserved characters [A-Za-z0-9._~-]: they can only sit inside one run of those. */
  readonly words: SecretAutomaton;
  /** Secrets with any other character (spaces, '/', '+', '=' …): searched in the whole text. */
  readonly others: SecretAutomaton;
}

/** One level of the index as a view sees it. */
export interface SecretLayer {
  readonly level: Level;
  /** False for a secret the level holds but no merchant held when the view was taken. */
  readonly visible: (secret: string) => boolean;
}

/** What the redaction looks in. */
export interface SecretView {
  readonly layers: readonly SecretLayer[];
  /** The shortest word secret of every layer (Infinity when none): a shorter run of unreserved characters is not searched. */
  readonly minWordLength: number;
  /** Secrets shorter than MIN_ANYWHERE_LENGTH: matched as whole segments, keys and values only. */
  readonly short: SecretSet;
}

export const EMPTY_VIEW: SecretView = { layers: [], minWordLength: Number.POSITIVE_INFINITY, short: new Set() };

export class SecretIndex {
  /** The secrets merchants hold now, with how many hold each. */
  private readonly counts = new Map<string, number>();
  private tables = new Tables([]);
  /** Bumped by every removal: a view sees the secrets removed after the generation it was taken at. */
  private generation = 0;
  private cached: SecretView | undefined;

  add(secret: string): void {
    if (!secret) return;
    const n = this.counts.get(secret) ?? 0;
    this.counts.set(secret, n + 1);
    if (n === 0) {
      this.tables.put(secret);
      this.cached = undefined;
    }
  }

  delete(secret: string): void {
    const n = this.counts.get(secret);
    if (n === undefined) return;
    if (n > 1) {
      this.counts.set(secret, n - 1);
      return;
    }
    this.counts.delete(secret);
    this.tables.remove(secret, ++this.generation);
    this.cached = undefined;
    if (this.tables.leftovers > this.counts.size) this.tables = new Tables(this.counts.keys());
  }

  has(secret: string): boolean {
    return this.counts.has(secret);
  }

  /** Secrets the automata still hold for views taken before their removal (bounded by the held ones). */
  get leftoverCount(): number {
    return this.tables.leftovers;
  }

  /** How many automata levels a view searches (O(log n) of the secrets). */
  get levelCount(): number {
    this.view();
    return this.tables.levelCount;
  }

  view(): SecretView {
    this.cached ??= this.tables.viewAt(this.generation);
    return this.cached;
  }
}

/** Not held: the generation of its removal is stored instead. */
const HELD = Number.POSITIVE_INFINITY;

/**
 * Secrets searched together: one level of the index. Its automata are built when a text first
 * needs them (most URLs have no run of unreserved characters as long as a secret), so a level
 * merged into a bigger one before any search costs no build at all.
 */
export class Level {
  readonly minWordLength: number;
  readonly hasOthers: boolean;
  private built: SecretAutomata | undefined;

  constructor(readonly secrets: readonly string[]) {
    let min = Number.POSITIVE_INFINITY;
    let others = false;
    for (const s of secrets) {
      if (isWord(s)) min = Math.min(min, s.length);
      else others = true;
    }
    this.minWordLength = min;
    this.hasOthers = others;
  }

  automata(): SecretAutomata {
    if (!this.built) {
      const words: string[] = [];
      const others: string[] = [];
      for (const s of this.secrets) (isWord(s) ? words : others).push(s);
      this.built = { words: new SecretAutomaton(words), others: new SecretAutomaton(others) };
    }
    return this.built;
  }
}

function isWord(secret: string): boolean {
  return /^[A-Za-z0-9._~-]+$/.test(secret);
}

/**
 * One generation's automata, as levels of decreasing size (the logarithmic method): secrets added
 * since the last view wait in `pending`; the next view builds them as a level, merged with every
 * level not bigger than it. Each secret is built O(log n) times over its life, and a URL is
 * searched in O(log n) automata.
 */
class Tables {
  /** Secrets of these automata no merchant holds now, with the generation of their removal. */
  private readonly removed = new Map<string, number>();
  private readonly short = new Map<string, number>();
  /** Every secret in a level or pending. */
  private readonly members = new Set<string>();
  private readonly levels: Level[] = [];
  private pending: string[] = [];
  leftovers = 0;

  constructor(held: Iterable<string>) {
    for (const s of held) this.put(s);
  }

  get levelCount(): number {
    return this.levels.length;
  }

  /** Adds a held secret (again, or for the first time). */
  put(s: string): void {
    if (s.length < MIN_ANYWHERE_LENGTH) {
      const was = this.short.get(s);
      if (was !== undefined && was !== HELD) this.leftovers--;
      this.short.set(s, HELD);
      return;
    }
    if (this.members.has(s)) {
      if (this.removed.delete(s)) this.leftovers--;
      return;
    }
    this.members.add(s);
    this.pending.push(s);
  }

  remove(s: string, generation: number): void {
    if (s.length < MIN_ANYWHERE_LENGTH) {
      if (this.short.get(s) !== HELD) return;
      this.short.set(s, generation);
      this.leftovers++;
      return;
    }
    if (this.removed.has(s) || !this.members.has(s)) return;
    this.removed.set(s, generation);
    this.leftovers++;
  }

  viewAt(generation: number): SecretView {
    if (this.pending.length > 0) this.buildPending();
    const removed = this.removed;
    const visible = (secret: string) => (removed.get(secret) ?? HELD) > generation;
    const layers = this.levels.map((level): SecretLayer => ({ level, visible }));
    return { layers, minWordLength: minWordLengthOf(layers), short: seenAt(this.short, generation) };
  }

  /**
   * The pending secrets as a level, merged with the levels not bigger than it. A merge leaves out
   * the secrets no merchant holds any more: views taken before keep the levels that have them.
   */
  private buildPending(): void {
    let secrets = this.pending;
    this.pending = [];
    while (this.levels.length > 0 && this.levels[this.levels.length - 1]!.secrets.length <= secrets.length) {
      secrets = this.levels.pop()!.secrets.concat(secrets);
    }
    const kept = secrets.filter((s) => !this.removed.has(s));
    for (const s of secrets) {
      if (!this.removed.delete(s)) continue;
      this.members.delete(s);
      this.leftovers--;
    }
    if (kept.length > 0) this.levels.push(new Level(kept));
  }
}

function minWordLengthOf(layers: readonly SecretLayer[]): number {
  return layers.reduce((min, l) => Math.min(min, l.level.minWordLength), Number.POSITIVE_INFINITY);
}

/** The secrets of a table a view taken at `generation` sees: held then (removed later, or never). */
function seenAt(table: Map<string, number>, generation: number): SecretSet {
  return {
    has: (secret) => (table.get(secret) ?? -1) > generation,
    get size() {
      return table.size;
    },
  };
}

/**
 * What two views see together: a secret either of them sees. For a request that waited for its
 * body: the view taken when its headers arrived (secrets removed since still count) with the one
 * of now (secrets added since count too). The same view twice, the common case (nothing changed
 * while the body came), is returned as it is.
 */
export function unionOf(a: SecretView, b: SecretView): SecretView {
  if (a === b) return a;
  const layers = [...a.layers];
  for (const layer of b.layers) {
    const same = layers.findIndex((l) => l.level === layer.level);
    if (same < 0) layers.push(layer);
    else {
      const mine = layers[same]!.visible;
      layers[same] = { ...layer, visible: (secret) => mine(secret) || layer.visible(secret) };
    }
  }
  return { layers, minWordLength: Math.min(a.minWordLength, b.minWordLength), short: eitherOf(a.short, b.short) };
}

function eitherOf(a: SecretSet, b: SecretSet): SecretSet {
  return { has: (secret) => a.has(secret) || b.has(secret), size: a.size + b.size };
}
