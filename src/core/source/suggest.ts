/** "Did you mean …?" for a misspelt key or value: the closest candidate within a small edit distance. */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  // Allow about one typo per three characters, at least one and at most three.
  const allowed = Math.min(3, Math.max(1, Math.floor(input.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  const needle = input.toLowerCase();
  for (const candidate of candidates.slice(0, MAX_CANDIDATES)) {
    // Lengths further apart than the allowance cannot be within it: skipping them keeps a long
    // input (a pasted blob as a key) from costing length × length per candidate.
    const lower = candidate.toLowerCase();
    if (Math.abs(lower.length - needle.length) > allowed) continue;
    const d = editDistance(needle, lower);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= allowed ? best : undefined;
}

/** Suggestions come from the first this many candidates (keys and enums are far fewer; merchant ids may not be). */
export const MAX_CANDIDATES = 200;

export function didYouMean(input: string, candidates: readonly string[]): string {
  const match = closest(input, candidates);
  return match ? `; did you mean '${match}'?` : "";
}

/**
 * Names like a mistyped one (scenario names such as `token-expires-after-calls`): the closest by edit
 * distance; else the names that share the most words with it, a word matching when both start with
 * the same letters (five, or the whole shorter word: `expiry` and `expires`), when at most `max`
 * names share that many. `token-expiry` is too far from every name for an edit distance, yet two
 * names plainly share its words.
 */
export function similarNames(input: string, candidates: readonly string[], max = 3): string[] {
  const near = closest(input, candidates);
  if (near) return [near];
  const words = wordsOf(input);
  let best = 0;
  let found: string[] = [];
  for (const candidate of candidates.slice(0, MAX_CANDIDATES)) {
    const theirs = wordsOf(candidate);
    const shared = words.filter((w) => theirs.some((t) => sameStem(w, t))).length;
    if (shared > best) [best, found] = [shared, [candidate]];
    else if (shared === best && shared > 0) found.push(candidate);
  }
  return found.length <= max ? found : [];
}

/** `(did you mean 'a' or 'b'?)` for the names similarNames finds, with a leading space; "" for none. */
export function didYouMeanNames(input: string, candidates: readonly string[]): string {
  const names = similarNames(input, candidates).map((n) => `'${n}'`);
  if (names.length === 0) return "";
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  return ` (did you mean ${list}?)`;
}

/** The words of a name, lower case, of three letters or more (short ones match too much). */
function wordsOf(name: string): string[] {
  return name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3)
    .slice(0, 20);
}

function sameStem(a: string, b: string): boolean {
  const n = Math.min(5, a.length, b.length);
  return a.slice(0, n) === b.slice(0, n);
}

/** Levenshtein distance with transpositions counted as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
