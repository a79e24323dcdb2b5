/**
 * Path globs of `match.path`: `*` is any run of characters within one segment, `/**` is zero or
 * more segments (so `/api/v2/**` matches `/api/v2` too), a `**` not after a slash is any run of
 * characters, and everything else is literal.
 *
 * Matched by running the pattern's automaton over the path, one character at a time, on the set
 * of live pattern positions: never backtracking, so a match costs at most (path length) ×
 * (pattern positions). A backtracking regular expression took minutes on a few hundred characters
 * with a pattern like `/*-*-*-*-*`, and the sandbox's one thread stopped answering meanwhile.
 * Each set met is remembered with where each kind of character leads from it (a lazily built
 * DFA), so most characters cost one table lookup.
 *
 * The language is exactly that of the regular expression the sandbox used before (`*` →
 * `[^/]*`, `**` → `.*`, `/**` → `(?:/.*)?`, anchored, no flags), down to `.` not matching line
 * terminators; test/unit/glob.test.ts checks the two against each other.
 */

/**
 * Limits a pattern must keep, checked when a scenario loads. The matcher is linear in the path
 * whatever the pattern; these keep the per-character factor small where the DFA is not built yet
 * (it grows with the live wildcards) and the DFA's tables small. The longest path of the API is
 * under 30 characters and a UUID-shaped segment (`*-*-*-*-*`) needs 5 wildcards, so both limits
 * are far above real use.
 */
export const GLOB_LIMITS = { maxLength: 256, maxWildcards: 16 } as const;

// Kinds of pattern positions. OPT_SLASH is the `/` of `/**`: it consumes a `/` into the ANY after
// it, or is skipped together with that ANY.
const LITERAL = 0;
const STAR = 1;
const ANY = 2;
const OPT_SLASH = 3;

const SLASH = 0x2f;

export interface PathGlob {
  readonly source: string;
  /** Wildcards in the pattern (`*`, `**`, `/**` each count one). */
  readonly wildcards: number;
  /** True when the whole path matches. */
  test(path: string): boolean;
}

/**
 * DFA states remembered per pattern, so its memory stays bounded whatever paths it meets: at most
 * this many states × (distinct characters in the pattern + 6) table slots. Once they are all
 * taken, a path that needs a new one finishes on the automaton itself (still linear, slower).
 */
const MAX_CACHED_STATES = 256;

/** `maxCachedStates` is for tests and bench/glob.mjs, which run the slower path too. */
export function compileGlob(source: string, options: { maxCachedStates?: number } = {}): PathGlob {
  const kinds: number[] = [];
  const codes: number[] = [];
  let wildcards = 0;
  for (let i = 0; i < source.length; i++) {
    const ch = source.charCodeAt(i);
    if (ch === SLASH && source[i + 1] === "*" && source[i + 2] === "*") {
      kinds.push(OPT_SLASH, ANY);
      codes.push(SLASH, 0);
      wildcards++;
      i += 2;
    } else if (source[i] === "*") {
      const double = source[i + 1] === "*";
      kinds.push(double ? ANY : STAR);
      codes.push(0);
      wildcards++;
      if (double) i++;
    } else {
      kinds.push(LITERAL);
      codes.push(ch);
    }
  }
  const dfa = new LazyDfa(Uint8Array.from(kinds), Uint16Array.from(codes), options.maxCachedStates ?? MAX_CACHED_STATES);
  return { source, wildcards, test: (path) => dfa.test(path) };
}

/** A set of live pattern positions and, filled in as paths meet them, where each class of character leads. */
interface DfaState {
  readonly positions: Int32Array;
  readonly accepts: boolean;
  readonly next: Array<DfaState | undefined>;
}

class LazyDfa {
  private readonly cache = new Map<string, DfaState>();
  /** Class of each character: 0 for those that act alike everywhere in the pattern, one each for the others. */
  private readonly asciiClass = new Uint16Array(128);
  private readonly otherClass = new Map<number, number>();
  private readonly classes: number;
  private readonly start: DfaState;

  constructor(
    private readonly kinds: Uint8Array,
    private readonly codes: Uint16Array,
    private readonly maxCached: number,
  ) {
    // A character acts apart when it is a literal of the pattern, the slash (* stops there) or a
    // line terminator (** stops there); any two others lead every set to the same set.
    const special = new Set<number>([SLASH, 0x0a, 0x0d, 0x2028, 0x2029]);
    kinds.forEach((kind, s) => {
      if (kind === LITERAL) special.add(codes[s]!);
    });
    let id = 0;
    for (const ch of special) {
      id++;
      if (ch < 128) this.asciiClass[ch] = id;
      else this.otherClass.set(ch, id);
    }
    this.classes = id + 1;
    const live = new Uint8Array(kinds.length + 1);
    enter(kinds, live, 0);
    this.start = this.stateOf(live);
  }

  test(path: string): boolean {
    let state = this.start;
    for (let k = 0; k < path.length; k++) {
      const ch = path.charCodeAt(k);
      const cls = ch < 128 ? this.asciiClass[ch]! : (this.otherClass.get(ch) ?? 0);
      let next = state.next[cls];
      if (next === undefined) {
        if (this.cache.size >= this.maxCached) return simulate(this.kinds, this.codes, state.positions, path, k);
        next = this.step(state, ch);
        state.next[cls] = next;
      }
      if (next.positions.length === 0) return false;
      state = next;
    }
    return state.accepts;
  }

  /** The set after one character (any of its class would do). */
  private step(state: DfaState, ch: number): DfaState {
    const { kinds, codes } = this;
    const live = new Uint8Array(kinds.length + 1);
    for (const s of state.positions) {
      const kind = kinds[s];
      if (kind === LITERAL) {
        if (codes[s] === ch) enter(kinds, live, s + 1);
      } else if (kind === STAR) {
        if (ch !== SLASH) enter(kinds, live, s);
      } else if (kind === ANY) {
        if (!isLineTerminator(ch)) enter(kinds, live, s);
      } else if (kind === OPT_SLASH && ch === SLASH) enter(kinds, live, s + 1);
    }
    return this.stateOf(live);
  }

  private stateOf(live: Uint8Array): DfaState {
    const positions: number[] = [];
    for (let s = 0; s < live.length; s++) if (live[s]) positions.push(s);
    const key = positions.join(",");
    const known = this.cache.get(key);
    if (known) return known;
    const state: DfaState = { positions: Int32Array.from(positions), accepts: live[this.kinds.length] === 1, next: new Array(this.classes) };
    this.cache.set(key, state);
    return state;
  }
}

/**
 * The rest of the path, from unit `from` on, through the automaton itself: the live positions as
 * a list, `seen[s] === k` marking s live after k units. Per character, work for each live position.
 */
function simulate(kinds: Uint8Array, codes: Uint16Array, positions: Int32Array, path: string, from: number): boolean {
  const end = kinds.length;
  const seen = new Int32Array(end + 1).fill(-1);
  let live = new Int32Array(end + 1);
  let next = new Int32Array(end + 1);
  live.set(positions);
  for (const s of positions) seen[s] = from;
  let liveCount = positions.length;
  for (let k = from; k < path.length; k++) {
    const ch = path.charCodeAt(k);
    let nextCount = 0;
    for (let i = 0; i < liveCount; i++) {
      const s = live[i]!;
      const kind = kinds[s];
      if (kind === LITERAL) {
        if (codes[s] === ch) nextCount = stampLive(kinds, seen, next, nextCount, s + 1, k + 1);
      } else if (kind === STAR) {
        if (ch !== SLASH) nextCount = stampLive(kinds, seen, next, nextCount, s, k + 1);
      } else if (kind === ANY) {
        if (!isLineTerminator(ch)) nextCount = stampLive(kinds, seen, next, nextCount, s, k + 1);
      } else if (kind === OPT_SLASH && ch === SLASH) nextCount = stampLive(kinds, seen, next, nextCount, s + 1, k + 1);
    }
    if (nextCount === 0) return false;
    const swap = live;
    live = next;
    next = swap;
    liveCount = nextCount;
  }
  return seen[end] === path.length;
}

/** enter() for simulate(): stamps s and what it reaches with k, appending them to `list`; returns the new count. */
function stampLive(kinds: Uint8Array, seen: Int32Array, list: Int32Array, count: number, s: number, k: number): number {
  for (;;) {
    if (seen[s] === k) return count;
    seen[s] = k;
    list[count++] = s;
    const kind = kinds[s];
    if (kind === STAR || kind === ANY) s += 1;
    else if (kind === OPT_SLASH) s += 2;
    else return count;
  }
}

/** Marks s live, with every position reachable from it without consuming a character. */
function enter(kinds: Uint8Array, live: Uint8Array, s: number): void {
  for (;;) {
    if (live[s]) return;
    live[s] = 1;
    const kind = kinds[s];
    if (kind === STAR || kind === ANY) s += 1;
    else if (kind === OPT_SLASH) s += 2;
    else return;
  }
}

/** What `.` does not match in a JavaScript regular expression without the s flag. */
function isLineTerminator(ch: number): boolean {
  return ch === 0x0a || ch === 0x0d || ch === 0x2028 || ch === 0x2029;
}

/** Why a pattern is refused at load (too long or too many wildcards), or undefined when it is fine. */
export function globProblem(source: string): string | undefined {
  if (source.length > GLOB_LIMITS.maxLength) {
    return `is ${source.length} characters long; a path pattern may have at most ${GLOB_LIMITS.maxLength}: match a shorter prefix with /** instead`;
  }
  const { wildcards } = compileGlob(source);
  if (wildcards > GLOB_LIMITS.maxWildcards) {
    return `has ${wildcards} wildcards; a path pattern may have at most ${GLOB_LIMITS.maxWildcards} (* and ** count one each): use one * for a whole segment, as in /api/v2/payment/*`;
  }
  return undefined;
}
