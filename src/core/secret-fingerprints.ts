import { createHmac, randomBytes, randomInt } from "node:crypto";

/**
 * What the log scan (POST /__sandbox/scan) remembers of every merchant secret the sandbox has held
 * since it started: a keyed fingerprint of it with its owner, never the secret. A log is usually
 * scanned after the test run, when its sessions have ended and their merchants are gone; a secret
 * they logged in clear must still be found then. Held secrets (live merchants, and a rotated
 * api_secret still accepted) stay for as long as they are held; once no merchant holds one (its
 * session ended, it was rotated out), its fingerprint stays too, at most MAX_ENDED_SECRETS of
 * them, the oldest dropped first. Everything is per sandbox and gone when the process ends.
 *
 * A fingerprint is two things, both keyed with values drawn at random when the sandbox starts:
 * - a polynomial hash of the secret's first FINGERPRINT_CHARS characters modulo two primes (about
 *   51 bits), which a text's prefix hashes give for any substring in O(1): the filter;
 * - an HMAC-SHA-256 of the same characters (128 bits kept), the proof, computed for a substring
 *   only when the filter matched.
 * A scan reads the text once to make its prefix hashes, then at each position looks at the lengths
 * the remembered secrets have among those starting with the same two characters (at most
 * FINGERPRINT_CHARS - MIN_SECRET_LENGTH + 1 of them): its work is linear in the text whatever the
 * number of secrets, and an HMAC is made only for a match (or a 2^-51 accident).
 */

export const SECRET_KINDS = ["api_secret", "payment_token", "password"] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

export interface SecretOwner {
  readonly kind: SecretKind;
  /** The merchant's id (not a secret). */
  readonly merchant: string;
}

/**
 * Secrets shorter than this are not searched for: a one-letter password would "leak" in every
 * line. Every generated and published sandbox secret is far longer.
 */
export const MIN_SECRET_LENGTH = 6;

/** Only this many first characters of a secret are fingerprinted: finding them in a log is a leak all the same. */
export const FINGERPRINT_CHARS = 64;

/** How many fingerprints of secrets no merchant holds any more are kept (sessions ended, rotated out); oldest dropped first. */
export const MAX_ENDED_SECRETS = 30_000;

/** The largest primes under 2^26 and 2^25: a hash times a base stays under 2^53, exact in a double. */
const P1 = 67_108_859;
const P2 = 33_554_393;

interface Entry {
  readonly owner: SecretOwner;
  readonly mac: string;
  readonly length: number;
  readonly key: number;
  readonly head: number;
  /** How many merchants' roles hold it now; 0 once ended. */
  held: number;
}

export class SecretFingerprints {
  private readonly macKey = randomBytes(32);
  private readonly base1 = randomInt(256, P1 - 1);
  private readonly base2 = randomInt(256, P2 - 1);
  private readonly pow1 = new Float64Array(FINGERPRINT_CHARS + 1);
  private readonly pow2 = new Float64Array(FINGERPRINT_CHARS + 1);
  /** Fingerprinted length → filter key → entries. */
  private readonly byLength = new Map<number, Map<number, Entry[]>>();
  /** First two characters → how many entries of each length start with them (and those lengths, ascending, once asked). */
  private readonly heads = new Map<number, { counts: Map<number, number>; lengths: number[] | undefined }>();
  /** Entries no merchant holds, oldest first. */
  private readonly ended = new Set<Entry>();
  private entries = 0;

  constructor(readonly maxEnded = MAX_ENDED_SECRETS) {
    this.pow1[0] = 1;
    this.pow2[0] = 1;
    for (let i = 1; i <= FINGERPRINT_CHARS; i++) {
      this.pow1[i] = (this.pow1[i - 1]! * this.base1) % P1;
      this.pow2[i] = (this.pow2[i - 1]! * this.base2) % P2;
    }
  }

  /** How many fingerprints are kept (held and ended). */
  get size(): number {
    return this.entries;
  }

  /** How many of them no merchant holds any more. */
  get endedCount(): number {
    return this.ended.size;
  }

  /** A merchant holds this secret in this role (again, or for the first time). */
  hold(secret: string, owner: SecretOwner): void {
    if (secret.length < MIN_SECRET_LENGTH) return;
    const found = this.entryOf(secret, owner);
    if (found.entry) {
      if (found.entry.held++ === 0) this.ended.delete(found.entry);
      return;
    }
    const { length, key, mac } = found;
    const entry: Entry = { owner: { kind: owner.kind, merchant: owner.merchant }, mac, length, key, head: headOf(secret, 0), held: 1 };
    let keys = this.byLength.get(length);
    if (!keys) {
      keys = new Map();
      this.byLength.set(length, keys);
    }
    const list = keys.get(key);
    if (list) list.push(entry);
    else keys.set(key, [entry]);
    let head = this.heads.get(entry.head);
    if (!head) {
      head = { counts: new Map(), lengths: undefined };
      this.heads.set(entry.head, head);
    }
    const n = head.counts.get(length) ?? 0;
    head.counts.set(length, n + 1);
    if (n === 0) head.lengths = undefined;
    this.entries++;
  }

  /** The merchant no longer holds it in this role (its session ended, it was rotated out): its fingerprint stays, bounded. */
  release(secret: string, owner: SecretOwner): void {
    if (secret.length < MIN_SECRET_LENGTH) return;
    const { entry } = this.entryOf(secret, owner);
    if (!entry || entry.held === 0 || --entry.held > 0) return;
    this.ended.add(entry);
    if (this.ended.size > this.maxEnded) this.drop(this.ended.values().next().value!);
  }

  /**
   * Calls `found` with the offset and owner of every remembered secret in the text (its first
   * FINGERPRINT_CHARS characters), offsets in increasing order. `steps`, when given, counts the
   * filter lookups (for the linear-scan test).
   */
  find(text: string, found: (offset: number, owner: SecretOwner) => void, steps?: { count: number }): void {
    const n = text.length;
    if (this.entries === 0 || n < MIN_SECRET_LENGTH) return;
    // Each character read once: its code, then the prefix hashes of both moduli.
    const codes = new Uint16Array(n);
    const h1 = new Uint32Array(n + 1);
    const h2 = new Uint32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      codes[i] = c;
      h1[i + 1] = (h1[i]! * this.base1 + c) % P1;
      h2[i + 1] = (h2[i]! * this.base2 + c) % P2;
    }
    let lookups = 0;
    for (let i = 0; i + MIN_SECRET_LENGTH <= n; i++) {
      const head = this.heads.get(codes[i]! * 65_536 + codes[i + 1]!);
      if (!head) continue;
      head.lengths ??= [...head.counts.keys()].sort((a, b) => a - b);
      for (const length of head.lengths) {
        if (i + length > n) break;
        lookups++;
        const a = (h1[i + length]! - ((h1[i]! * this.pow1[length]!) % P1) + P1) % P1;
        const b = (h2[i + length]! - ((h2[i]! * this.pow2[length]!) % P2) + P2) % P2;
        const entries = this.byLength.get(length)?.get(a * P2 + b);
        if (!entries) continue;
        const mac = this.mac(text.slice(i, i + length));
        for (const e of entries) if (e.mac === mac) found(i, e.owner);
      }
    }
    if (steps) steps.count += lookups;
  }

  private entryOf(secret: string, owner: SecretOwner): { entry: Entry | undefined; length: number; key: number; mac: string } {
    const length = Math.min(secret.length, FINGERPRINT_CHARS);
    let a = 0;
    let b = 0;
    for (let i = 0; i < length; i++) {
      const c = secret.charCodeAt(i);
      a = (a * this.base1 + c) % P1;
      b = (b * this.base2 + c) % P2;
    }
    const key = a * P2 + b;
    const mac = this.mac(secret.slice(0, length));
    const entry = this.byLength
      .get(length)
      ?.get(key)
      ?.find((e) => e.mac === mac && e.owner.kind === owner.kind && e.owner.merchant === owner.merchant);
    return { entry, length, key, mac };
  }

  private mac(text: string): string {
    return createHmac("sha256", this.macKey).update(text).digest().subarray(0, 16).toString("base64url");
  }

  private drop(entry: Entry): void {
    this.ended.delete(entry);
    const keys = this.byLength.get(entry.length)!;
    const list = keys.get(entry.key)!;
    list.splice(list.indexOf(entry), 1);
    if (list.length === 0) keys.delete(entry.key);
    if (keys.size === 0) this.byLength.delete(entry.length);
    const head = this.heads.get(entry.head)!;
    const n = head.counts.get(entry.length)! - 1;
    if (n > 0) head.counts.set(entry.length, n);
    else {
      head.counts.delete(entry.length);
      head.lengths = undefined;
      if (head.counts.size === 0) this.heads.delete(entry.head);
    }
    this.entries--;
  }
}

/** The two characters at `at`, as one number. */
function headOf(text: string, at: number): number {
  return text.charCodeAt(at) * 65_536 + text.charCodeAt(at + 1);
}
