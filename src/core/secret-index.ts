/**
 * The secrets of the loaded merchants (api_secret, login password, payment token), indexed so the
 * redaction of every request's URL (redact.ts) finds them without scanning each merchant: a
 * candidate substring is looked up in a Set, and only for the lengths some secret has.
 *
 * Merchants come and go (sessions), so the index counts how many merchants hold each value, and
 * a change costs O(1) whatever the number of merchants (5,000 live sessions hold 15,000 secrets;
 * rebuilding the view after each change made every session creation cost O(n)):
 * - a new secret goes into the lookup tables in place, but a view keeps the lengths it was taken
 *   with, and a rebuild (below) leaves it the old tables: a view taken earlier may miss a secret
 *   added since. A request that waited for its body therefore redacts with `unionOf` its arrival
 *   view and the view of the moment it is handled;
 * - a secret no merchant holds any more is stamped with the generation it went in, and a view
 *   sees only what was still held when it was taken. A request that took its view before a
 *   session ended (an idle one is reaped while its request is read) still redacts that session's
 *   secrets in its own log line, as a snapshot would;
 * - once those stamped leftovers outnumber the held secrets, the tables are built anew from the
 *   held ones (views already taken keep the old tables): amortized O(1) per removal, and the
 *   memory of ended sessions goes back.
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

/** What the redaction looks in. */
export interface SecretView {
  /** Secrets made only of URL-unreserved characters [A-Za-z0-9._~-]: they can only sit inside one run of those. */
  readonly words: SecretSet;
  /** Their distinct lengths, ascending. */
  readonly wordLengths: readonly number[];
  /** Longer secrets with any other character (spaces, '/', '+', '=' …): searched in the whole text. */
  readonly others: SecretSet;
  readonly otherLengths: readonly number[];
  /**
   * A 1 at headOf() of every word and other secret: most positions of a text are ruled out by one
   * array read, without cutting a substring (a Set of numbers would box each key on every lookup).
   */
  readonly heads: Uint8Array;
  /** Secrets shorter than MIN_ANYWHERE_LENGTH: matched as whole segments, keys and values only. */
  readonly short: SecretSet;
}

/** The first two UTF-16 units of text at `at`, hashed to 16 bits (a collision only costs one Set lookup). */
export function headOf(text: string, at: number): number {
  return ((text.charCodeAt(at) << 8) ^ text.charCodeAt(at + 1)) & 0xffff;
}

export const EMPTY_VIEW: SecretView = {
  words: new Set(),
  wordLengths: [],
  others: new Set(),
  otherLengths: [],
  heads: new Uint8Array(0),
  short: new Set(),
};

export class SecretIndex {
  /** The secrets merchants hold now, with how many hold each. */
  private readonly counts = new Map<string, number>();
  private tables = new Tables();
  /** Bumped by every removal: a view sees the secrets removed after the generation it was taken at. */
  private generation = 0;
  private cached: SecretView | undefined;

  add(secret: string): void {
    if (!secret) return;
    const n = this.counts.get(secret) ?? 0;
    this.counts.set(secret, n + 1);
    if (n === 0 && this.tables.put(secret)) this.cached = undefined;
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
    if (this.tables.leftovers > this.counts.size) {
      this.tables = new Tables();
      for (const held of this.counts.keys()) this.tables.put(held);
    }
  }

  has(secret: string): boolean {
    return this.counts.has(secret);
  }

  /** Secrets the lookup tables still hold for views taken before their removal (bounded by the held ones). */
  get leftoverCount(): number {
    return this.tables.leftovers;
  }

  view(): SecretView {
    this.cached ??= this.tables.viewAt(this.generation);
    return this.cached;
  }
}

/** Not held: the generation of its removal is stored instead. */
const HELD = Number.POSITIVE_INFINITY;

/** The lookup tables: each secret with the generation it was removed at (HELD while held). */
class Tables {
  private readonly words = new Map<string, number>();
  private readonly others = new Map<string, number>();
  private readonly short = new Map<string, number>();
  private wordLengths: number[] = [];
  private otherLengths: number[] = [];
  private readonly heads = new Uint8Array(0x10000);
  leftovers = 0;

  /** Adds a held secret; true when the views must be made again (a length no secret had). */
  put(s: string): boolean {
    const table = this.tableOf(s);
    if (table.has(s)) {
      if (table.get(s) !== HELD) this.leftovers--;
      table.set(s, HELD);
      return false;
    }
    table.set(s, HELD);
    if (table === this.short) return false;
    this.heads[headOf(s, 0)] = 1;
    // Lengths of leftovers stay: a length too many costs a lookup, never a secret shown.
    if (table === this.words && !this.wordLengths.includes(s.length)) {
      this.wordLengths = [...this.wordLengths, s.length].sort((a, b) => a - b);
      return true;
    }
    if (table === this.others && !this.otherLengths.includes(s.length)) {
      this.otherLengths = [...this.otherLengths, s.length].sort((a, b) => a - b);
      return true;
    }
    return false;
  }

  remove(s: string, generation: number): void {
    const table = this.tableOf(s);
    if (table.get(s) !== HELD) return;
    table.set(s, generation);
    this.leftovers++;
  }

  viewAt(generation: number): SecretView {
    return {
      words: seenAt(this.words, generation),
      wordLengths: this.wordLengths,
      others: seenAt(this.others, generation),
      otherLengths: this.otherLengths,
      heads: this.heads,
      short: seenAt(this.short, generation),
    };
  }

  private tableOf(s: string): Map<string, number> {
    if (s.length < MIN_ANYWHERE_LENGTH) return this.short;
    return /^[A-Za-z0-9._~-]+$/.test(s) ? this.words : this.others;
  }
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
 * What two views see together: a secret either of them sees, at the lengths of both. For a request
 * that waited for its body: the view taken when its headers arrived (secrets removed since still
 * count) with the one of now (secrets added since count too). The same view twice, the common case
 * (nothing changed while the body came), is returned as it is.
 */
export function unionOf(a: SecretView, b: SecretView): SecretView {
  if (a === b) return a;
  return {
    words: eitherOf(a.words, b.words),
    wordLengths: mergedLengths(a.wordLengths, b.wordLengths),
    others: eitherOf(a.others, b.others),
    otherLengths: mergedLengths(a.otherLengths, b.otherLengths),
    heads: a.heads === b.heads ? a.heads : headsOf(a.heads, b.heads),
    short: eitherOf(a.short, b.short),
  };
}

function eitherOf(a: SecretSet, b: SecretSet): SecretSet {
  return { has: (secret) => a.has(secret) || b.has(secret), size: a.size + b.size };
}

function mergedLengths(a: readonly number[], b: readonly number[]): readonly number[] {
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}

function headsOf(a: Uint8Array, b: Uint8Array): Uint8Array {
  const heads = new Uint8Array(Math.max(a.length, b.length));
  for (let i = 0; i < heads.length; i++) heads[i] = (a[i] ?? 0) | (b[i] ?? 0);
  return heads;
}
