/**
 * Positions in the store's logs ("<ms>-<n>" as Redis stream ids, or a plain number): which comes
 * later. "" is before everything.
 */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "") return -1;
  if (b === "") return 1;
  const [a1 = 0, a2 = 0] = a.split("-").map(Number);
  const [b1 = 0, b2 = 0] = b.split("-").map(Number);
  return a1 !== b1 ? a1 - b1 : a2 - b2;
}
