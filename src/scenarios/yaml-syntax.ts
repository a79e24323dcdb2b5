import { isScalar, visit, type Document } from "yaml";

/** What is wrong with a scenario text as YAML, before any of it is read as a scenario. */

/** Every key that repeats an earlier scalar key of its mapping, where it is: one set per mapping. */
export function duplicateKeys(doc: Document): Array<{ offset: number; code: string; message: string }> {
  const found: Array<{ offset: number; code: string; message: string }> = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) found.push({ offset: pair.key.range?.[0] ?? 0, code: "DUPLICATE_KEY", message: "Map keys must be unique" });
        else seen.add(pair.key.value);
      }
    },
  });
  return found;
}

export function syntaxMessage(code: string, message: string, at: string): string {
  if (code === "DUPLICATE_KEY") {
    // The parser marks the key's first character; read the whole key (quoted, as in JSON, or plain).
    const key = (/^"([^"]+)"/.exec(at) ?? /^'([^']+)'/.exec(at) ?? /^([^\s:,{}[\]]+)/.exec(at))?.[1];
    return `${key ? `the key '${key}'` : "a key"} appears twice in the same mapping; keep one`;
  }
  const first = message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
  return `not valid YAML or JSON: ${first}`;
}
