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
