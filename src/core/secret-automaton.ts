import type { Span } from "./jwt-runs.js";

/**
 * An Aho–Corasick automaton over a fixed set of secrets: one pass over a text finds every place a
 * secret ends, whatever the number of secrets and of their lengths (looking each length up at each
 * position cost seconds on a long path once a session had rotated its secret to many lengths,
 * issue 23 §6; docs/reliability.md, "redaction cost vs secrets"). Immutable once built: a view of the secret index keeps the automata it was taken
 * with while the index builds new ones (secret-index.ts says when).
 *
 * Our own rather than an npm package: the ones there (ahocorasick, @monyone/aho-corasick,
 * modern-ahocorasick) report every match, so nested secrets (`aaaa…`, one character longer each)
 * make the output, not only the work, grow with the text times the number of secrets; here each
 * end position reports only its longest secret still visible to the view, which is all a
 * redaction needs (shorter ones ending there lie inside it).
 *
 * The trie is built from the sorted secrets in one pass, its edges laid out per state in arrays
 * (a state's edges sorted by character, found by binary search; the root's ASCII edges in a table).
 */

/** How many hidden (removed) secrets one end position may skip before the next is taken as visible. */
const MAX_HIDDEN_STEPS = 4;

export class SecretAutomaton {
  readonly size: number;
  private readonly patterns: readonly string[];
  private readonly edgeStart: Int32Array;
  private readonly edgeChar: Uint16Array;
  private readonly edgeTo: Int32Array;
  private readonly rootAscii: Int32Array;
  private readonly fail: Int32Array;
  /** The state of the longest secret ending at this state's text (itself included), or -1. */
  private readonly out: Int32Array;
  /** The secret a state completes (an index into patterns), or -1. */
  private readonly patternOf: Int32Array;
  /** The length of the shortest secret (Infinity when there is none): a shorter text holds none. */
  readonly minLength: number;

  constructor(secrets: Iterable<string>) {
    const patterns = [...new Set(secrets)].filter((s) => s.length > 0).sort();
    this.patterns = patterns;
    this.size = patterns.length;
    this.minLength = patterns.reduce((min, p) => Math.min(min, p.length), Number.POSITIVE_INFINITY);
    let states = 1;
    for (let i = 0; i < patterns.length; i++) states += patterns[i]!.length - (i === 0 ? 0 : commonPrefix(patterns[i - 1]!, patterns[i]!));
    const parent = new Int32Array(states);
    const charOf = new Uint16Array(states);
    const depth = new Int32Array(states);
    const patternOf = new Int32Array(states).fill(-1);
    // Sorted input: each new secret shares a prefix with the one before and adds states after it.
    const path = [0];
    let next = 1;
    for (let i = 0; i < patterns.length; i++) {
      const p = patterns[i]!;
      const shared = i === 0 ? 0 : commonPrefix(patterns[i - 1]!, p);
      path.length = shared + 1;
      for (let d = shared; d < p.length; d++) {
        const s = next++;
        parent[s] = path[d]!;
        charOf[s] = p.charCodeAt(d);
        depth[s] = d + 1;
        path.push(s);
      }
      patternOf[path[p.length]!] = i;
    }
    // Edges grouped by parent: states are numbered in preorder, so each parent's come in character order.
    const edgeStart = new Int32Array(states + 1);
    for (let s = 1; s < states; s++) edgeStart[parent[s]! + 1]!++;
    for (let s = 0; s < states; s++) edgeStart[s + 1]! += edgeStart[s]!;
    const fill = edgeStart.slice(0, states);
    const edgeChar = new Uint16Array(Math.max(0, states - 1));
    const edgeTo = new Int32Array(Math.max(0, states - 1));
    for (let s = 1; s < states; s++) {
      const at = fill[parent[s]!]!++;
      edgeChar[at] = charOf[s]!;
      edgeTo[at] = s;
    }
    this.edgeStart = edgeStart;
    this.edgeChar = edgeChar;
    this.edgeTo = edgeTo;
    this.rootAscii = new Int32Array(128).fill(-1);
    for (let e = edgeStart[0]!; e < edgeStart[1]!; e++) if (edgeChar[e]! < 128) this.rootAscii[edgeChar[e]!] = edgeTo[e]!;
    this.patternOf = patternOf;
    // Failure links in breadth-first order (by depth): a state's parent and shorter suffixes come first.
    const byDepth = orderByDepth(depth);
    const fail = new Int32Array(states);
    const out = new Int32Array(states).fill(-1);
    for (const s of byDepth) {
      if (s === 0) continue;
      const p = parent[s]!;
      if (p !== 0) {
        let f = fail[p]!;
        let t = this.child(f, charOf[s]!);
        while (t < 0 && f !== 0) {
          f = fail[f]!;
          t = this.child(f, charOf[s]!);
        }
        fail[s] = t < 0 ? 0 : t;
      }
      out[s] = patternOf[s]! >= 0 ? s : out[fail[s]!]!;
    }
    this.fail = fail;
    this.out = out;
  }

  /**
   * Adds to `spans` where secrets stand in text[from, to): at each end position the longest secret
   * `visible` accepts. Spans are merged as they come (each ends later than the last), so a run
   * of overlapping secrets costs one span: `spans` must be this automaton's own list, given texts
   * (or ranges of one) in increasing order. A chain of more than MAX_HIDDEN_STEPS hidden secrets
   * ending at one position counts as visible: more redacted, never less, and the work per
   * character stays bounded.
   */
  findIn(text: string, from: number, to: number, visible: (secret: string) => boolean, spans: Span[]): void {
    if (to - from < this.minLength) return;
    let state = 0;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      let t = this.child(state, c);
      while (t < 0 && state !== 0) {
        state = this.fail[state]!;
        t = this.child(state, c);
      }
      state = t < 0 ? 0 : t;
      let found = this.out[state]!;
      for (let steps = 0; found >= 0; steps++) {
        const secret = this.patterns[this.patternOf[found]!]!;
        if (steps >= MAX_HIDDEN_STEPS || visible(secret)) {
          pushMerged(spans, i + 1 - secret.length, i + 1);
          break;
        }
        found = this.out[this.fail[found]!]!;
      }
    }
  }

  private child(state: number, c: number): number {
    if (state === 0 && c < 128) return this.rootAscii[c]!;
    let lo = this.edgeStart[state]!;
    let hi = this.edgeStart[state + 1]! - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = this.edgeChar[mid]!;
      if (m === c) return this.edgeTo[mid]!;
      if (m < c) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** Adds [start, end) to spans whose last ones end before `end`, merging every one it overlaps or touches. */
export function pushMerged(spans: Span[], start: number, end: number): void {
  let s = start;
  while (spans.length > 0 && spans[spans.length - 1]![1] >= s) {
    const last = spans.pop()!;
    s = Math.min(s, last[0]);
    end = Math.max(end, last[1]);
  }
  spans.push([s, end]);
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** State numbers ordered by depth (a counting sort). */
function orderByDepth(depth: Int32Array): Int32Array {
  let max = 0;
  for (const d of depth) if (d > max) max = d;
  const start = new Int32Array(max + 2);
  for (const d of depth) start[d + 1]!++;
  for (let d = 0; d <= max; d++) start[d + 1]! += start[d]!;
  const order = new Int32Array(depth.length);
  for (let s = 0; s < depth.length; s++) order[start[depth[s]!]!++] = s;
  return order;
}
