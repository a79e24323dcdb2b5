/**
 * JSON values as lists of leaves, for the inference and the comparison: a leaf is anything that is
 * not a non-empty object or array, found by its path (`result.accessToken`, `errors[0].code`).
 */
export type Path = ReadonlyArray<string | number>;

export interface Leaf {
  path: Path;
  value: unknown;
}

export function leaves(value: unknown, path: Path = []): Leaf[] {
  if (Array.isArray(value) && value.length > 0) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (isObject(value) && Object.keys(value).length > 0) return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [{ path, value }];
}

/** A copy of `value` with each leaf replaced by what `fn` returns for it. */
export function mapLeaves(value: unknown, fn: (path: Path, leaf: unknown) => unknown, path: Path = []): unknown {
  if (Array.isArray(value) && value.length > 0) return value.map((v, i) => mapLeaves(v, fn, [...path, i]));
  if (isObject(value) && Object.keys(value).length > 0) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapLeaves(v, fn, [...path, k])]));
  }
  return fn(path, value);
}

export function pathText(path: Path): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? p : `.${p}`;
  return out || "(the whole body)";
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The last named step of a path (`code` for `error.code`, `id` for `items[0].id`). */
export function keyOf(path: Path): string {
  for (let i = path.length - 1; i >= 0; i--) if (typeof path[i] === "string") return path[i] as string;
  return "";
}
