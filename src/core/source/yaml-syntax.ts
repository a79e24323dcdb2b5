import { isAlias, isCollection, isPair, isScalar, isSeq, visit, type Document } from "yaml";

/** What is wrong with a scenario text as YAML, before any of it is read as a scenario. */

/**
 * Where the first collection nested more than `maxDepth` levels deep starts, or undefined. Walked
 * without recursion, before the checks below and the reading of the document, which recurse.
 */
export function tooDeepOffset(doc: Document, maxDepth: number): number | undefined {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: doc.contents, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (isPair(node)) {
      stack.push({ node: node.key, depth }, { node: node.value, depth });
    } else if (isCollection(node)) {
      if (depth > maxDepth) return node.range?.[0] ?? 0;
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 });
    }
  }
  return undefined;
}

/** Every key that repeats an earlier scalar key of its mapping, where it is: one set per mapping. */
export function duplicateKeys(doc: Document): Array<{ offset: number; firstOffset: number; code: string; message: string }> {
  const found: Array<{ offset: number; firstOffset: number; code: string; message: string }> = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Map<unknown, number>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const offset = pair.key.range?.[0] ?? 0;
        const first = seen.get(pair.key.value);
        if (first !== undefined) found.push({ offset, firstOffset: first, code: "DUPLICATE_KEY", message: "" });
        else seen.set(pair.key.value, offset);
      }
    },
  });
  return found;
}

/**
 * Every key that is a list or a mapping (`? [a, b]: 1`, `{a: 1}: x`), where the key starts. YAML
 * allows them, a scenario's keys are names; and reading one into an object makes the yaml library
 * print a Node "Warning:" on stderr and turn the key into text, which was then reported as an
 * unknown key at 1:1. Found here, before the document is read, so neither happens.
 */
export function collectionKeys(
  doc: Document,
  text: string,
  /** What the file's keys are, for the message. */
  keys = "a scenario's keys are names such as api_key or match",
): Array<{ offset: number; code: string; message: string }> {
  const found: Array<{ offset: number; code: string; message: string }> = [];
  const reported = new Set<number>();
  visit(doc, {
    Pair(_, pair) {
      const key = pair.key;
      const node = isAlias(key) ? key.resolve(doc) : key;
      if (!isCollection(node)) return;
      const offset = (key as { range?: [number, number, number] }).range?.[0] ?? 0;
      if (reported.has(offset)) return;
      reported.add(offset);
      const end = (key as { range?: [number, number, number] }).range?.[1] ?? offset;
      const shown = text.slice(offset, end).replace(/\s+/g, " ").trim();
      const kind = isSeq(node) ? "a list" : "a mapping";
      found.push({
        offset,
        code: "COLLECTION_KEY",
        message: `this key is ${kind} ('${shown.length <= 40 ? shown : `${shown.slice(0, 40)}…`}'), but ${keys}; write the key as plain text`,
      });
    },
  });
  return found;
}

export function syntaxMessage(code: string, message: string, at: string): string {
  if (code === "DUPLICATE_KEY") {
    // The parser marks the key's first character; read the whole key (quoted, as in JSON, or plain).
    const key = (/^"([^"]+)"/.exec(at) ?? /^'([^']+)'/.exec(at) ?? /^([^\s:,{}[\]]+)/.exec(at))?.[1];
    return `${key ? `the key '${key}'` : "a key"} appears twice in the same mapping${message}; keep one`;
  }
  if (code === "COLLECTION_KEY") return message;
  const first = message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
  return `not valid YAML or JSON: ${first}`;
}
