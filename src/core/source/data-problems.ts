/**
 * A problem found in scenario data, by its path in the data: what the schema explainer
 * (explain-issues.ts) and the cross-field checks (cross-checks.ts) return, and what load.ts then
 * places at a line and column of the text.
 */

export type Path = PropertyKey[];
export interface Explained {
  path: Path;
  /** For an unknown key: the key itself, so the position is the key's, not its parent's. */
  key?: string;
  message: string;
}

/** A path as problems show it: `rules[2].match.endpoint`. */
export function pathText(path: Path): string {
  return path.reduce<string>((acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), "");
}

/** A key or name from the file, shortened for a message: a pasted blob as a key must not fill the screen. */
export function clip(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 80)}…`;
}
