import { LineCounter, isMap, isNode, isPair, isScalar, parseDocument, type Document, type Node } from "yaml";
import type { Path } from "./data-problems.js";

/** Where a path of the data is in a scenario's YAML text: its line and column, for problems. */

/** Where `path` is in a scenario text (1:1 when it cannot be found): for problems found after loading. */
export function positionIn(text: string, path: Path): { line: number; column: number } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const pos = lineCounter.linePos(offsetOf(doc, path));
  return { line: pos.line, column: pos.col };
}

/**
 * offsetOf, remembering what it found: a file with thousands of problems under one mapping would
 * otherwise search that mapping's keys (and walk down to it) once per problem, quadratic in its size.
 */
export function offsetFinder(doc: Document): (path: Path, key?: string) => number {
  const keysByParent = new Map<string, Map<unknown, number> | undefined>();
  const byPath = new Map<string, number>();
  return (path, key) => {
    // JSON, not pathText: a key may hold a dot, and ["a.b"] is not ["a", "b"].
    const at = JSON.stringify(path.map((p) => (typeof p === "number" ? p : String(p))));
    if (key !== undefined) {
      if (!keysByParent.has(at)) {
        const parent = doc.getIn(path as unknown[], true);
        let keys: Map<unknown, number> | undefined;
        if (isMap(parent)) {
          keys = new Map();
          // The first pair with the key, as offsetOf's find takes it.
          for (const p of parent.items)
            if (isPair(p) && isScalar(p.key) && p.key.range && !keys.has(p.key.value)) keys.set(p.key.value, p.key.range[0]);
        }
        keysByParent.set(at, keys);
      }
      const found = keysByParent.get(at)?.get(key);
      if (found !== undefined) return found;
    }
    let offset = byPath.get(at);
    if (offset === undefined) {
      offset = offsetOf(doc, path);
      byPath.set(at, offset);
    }
    return offset;
  };
}

/** The offset of the node at `path` (or of the key `key` inside it); the nearest existing ancestor otherwise. */
function offsetOf(doc: Document, path: Path, key?: string): number {
  if (key !== undefined) {
    const parent = doc.getIn(path as unknown[], true);
    if (isMap(parent)) {
      const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
      if (pair && isNode(pair.key) && pair.key.range) return pair.key.range[0];
    }
  }
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as unknown[], true) as Node | undefined;
    if (isNode(node) && node.range) {
      // For a missing key, point at its parent mapping; for an existing value, at the value.
      return node.range[0];
    }
  }
  return 0;
}
