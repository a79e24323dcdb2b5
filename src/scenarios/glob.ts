/**
 * Path globs of `match.path`: `*` is any run of characters within one segment, `/**` is zero or
 * more segments (so `/api/v2/**` matches `/api/v2` too), a `**` not after a slash is any run of
 * characters, and everything else is literal.
 *
 * Matched by simulating the pattern's automaton over the path, one character at a time, with the
 * set of live pattern positions: never backtracking, so a match costs at most (path length) ×
 * (pattern positions). A backtracking regular expression took minutes on a few hundred characters
 * with a pattern like `/*-*-*-*-*`, and the sandbox's one thread stopped answering meanwhile.
 *
 * The language is exactly that of the regular expression the sandbox used before (`*` →
 * `[^/]*`, `**` → `.*`, `/**` → `(?:/.*)?`, anchored, no flags), down to `.` not matching line
 * terminators; test/unit/glob.test.ts checks the two against each other.
 */

/**
 * Limits a pattern must keep, checked when a scenario loads. The matcher is linear in the path
 * whatever the pattern; these keep the per-character factor small (it is the number of live
 * wildcards). The longest path of the API is under 30 characters and a UUID-shaped segment
 * (`*-*-*-*-*`) needs 5 wildcards, so both limits are far above real use.
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

export function compileGlob(source: string): PathGlob {
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
  const automaton = { kinds: Uint8Array.from(kinds), codes: Uint16Array.from(codes) };
  return { source, wildcards, test: (path) => run(automaton, path) };
}

interface Automaton {
  kinds: Uint8Array;
  codes: Uint16Array;
}

/**
 * The path's UTF-16 code units through the automaton. `live` holds the positions reached so far
 * (each at most once: `seen[s] === k` marks s live after k units); all buffers are per call.
 */
function run({ kinds, codes }: Automaton, path: string): boolean {
  const end = kinds.length;
  const seen = new Int32Array(end + 1).fill(-1);
  let live = new Int32Array(end + 1);
  let next = new Int32Array(end + 1);
  let liveCount = enter(kinds, seen, live, 0, 0, 0);
  for (let k = 0; k < path.length; k++) {
    const ch = path.charCodeAt(k);
    let nextCount = 0;
    for (let i = 0; i < liveCount; i++) {
      const s = live[i]!;
      if (s === end) continue;
      const kind = kinds[s];
      if (kind === LITERAL) {
        if (codes[s] === ch) nextCount = enter(kinds, seen, next, nextCount, s + 1, k + 1);
      } else if (kind === STAR) {
        if (ch !== SLASH) nextCount = enter(kinds, seen, next, nextCount, s, k + 1);
      } else if (kind === ANY) {
        if (!isLineTerminator(ch)) nextCount = enter(kinds, seen, next, nextCount, s, k + 1);
      } else if (ch === SLASH) nextCount = enter(kinds, seen, next, nextCount, s + 1, k + 1);
    }
    if (nextCount === 0) return false;
    const swap = live;
    live = next;
    next = swap;
    liveCount = nextCount;
  }
  return seen[end] === path.length;
}

/**
 * Makes s live after k units, with every position reachable from it without consuming, appending
 * them to `list` from `count` on; returns the new count.
 */
function enter(kinds: Uint8Array, seen: Int32Array, list: Int32Array, count: number, s: number, k: number): number {
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
