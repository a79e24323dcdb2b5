/**
 * The secrets of the loaded merchants (api_secret, login password, payment token), indexed so the
 * redaction of every request's URL (redact.ts) finds them without scanning each merchant: a
 * candidate substring is looked up in a Set, and only for the lengths some secret has.
 *
 * Merchants come and go (sessions), so the index counts how many merchants hold each value and
 * rebuilds its lookup view only on the first request after a change, not on every request.
 */

/** Below this length a secret is redacted only where it is a whole path segment or query key/value:
 * searched anywhere, a 4-character password would redact pieces of every URL. */
export const MIN_ANYWHERE_LENGTH = 8;

/** What the redaction looks in. */
export interface SecretView {
  /** Secrets made only of URL-unreserved characters [A-Za-z0-9._~-]: they can only sit inside one run of those. */
  readonly words: ReadonlySet<string>;
  /** Their distinct lengths, ascending. */
  readonly wordLengths: readonly number[];
  /** Longer secrets with any other character (spaces, '/', '+', '=' …): searched in the whole text. */
  readonly others: ReadonlySet<string>;
  readonly otherLengths: readonly number[];
  /**
   * A 1 at headOf() of every word and other secret: most positions of a text are ruled out by one
   * array read, without cutting a substring (a Set of numbers would box each key on every lookup).
   */
  readonly heads: Uint8Array;
  /** Secrets shorter than MIN_ANYWHERE_LENGTH: matched as whole segments, keys and values only. */
  readonly short: ReadonlySet<string>;
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
  private readonly counts = new Map<string, number>();
  private cached: SecretView | undefined = EMPTY_VIEW;

  add(secret: string): void {
    if (!secret) return;
    this.counts.set(secret, (this.counts.get(secret) ?? 0) + 1);
    this.cached = undefined;
  }

  delete(secret: string): void {
    const n = this.counts.get(secret);
    if (n === undefined) return;
    if (n > 1) this.counts.set(secret, n - 1);
    else this.counts.delete(secret);
    this.cached = undefined;
  }

  has(secret: string): boolean {
    return this.counts.has(secret);
  }

  view(): SecretView {
    this.cached ??= buildView(this.counts.keys());
    return this.cached;
  }
}

function buildView(secrets: Iterable<string>): SecretView {
  const words = new Set<string>();
  const others = new Set<string>();
  const short = new Set<string>();
  for (const s of secrets) {
    if (s.length < MIN_ANYWHERE_LENGTH) short.add(s);
    else if (/^[A-Za-z0-9._~-]+$/.test(s)) words.add(s);
    else others.add(s);
  }
  const heads = new Uint8Array(0x10000);
  for (const s of [...words, ...others]) heads[headOf(s, 0)] = 1;
  return { words, wordLengths: lengthsOf(words), others, otherLengths: lengthsOf(others), heads, short };
}

function lengthsOf(set: Set<string>): number[] {
  return [...new Set([...set].map((s) => s.length))].sort((a, b) => a - b);
}
