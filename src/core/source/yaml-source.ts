import { readFileSync, statSync } from "node:fs";
import { LineCounter, parseDocument } from "yaml";
import type { Path } from "./data-problems.js";
import { boundProblems, type SourceProblem } from "./problems.js";
import { nestingPastLimit } from "./nesting-scan.js";
import { DEPTH_MESSAGE, SOURCE_LIMITS, sizeMessage } from "./source-limits.js";
import { offsetFinder } from "./yaml-positions.js";
import { rootSyntaxError } from "./yaml-root-error.js";
import { collectionKeys, duplicateKeys, syntaxMessage, tooDeepOffset } from "./yaml-syntax.js";

/**
 * Reading a source file (a scenario, a profile: YAML, or JSON, which YAML 1.2 reads too) into
 * data, with a way to place a path of that data at a line and column of the text. What cannot be
 * read is returned as located problems, so each loader throws its own error with them.
 */

/**
 * The pre-scan's bound (nestingPastLimit): well above the allowed depth, since its count may run a
 * few levels over the real one, and well below the ~800 levels the parser's recursion survives.
 */
const PRESCAN_DEPTH = SOURCE_LIMITS.maxDepth * 4;

export type PositionOf = (path: Path, key?: string) => { line: number; column: number };

export type SourceRead = { ok: true; data: unknown; positionOf: PositionOf } | { ok: false; problems: SourceProblem[] };

/** The file's text, or one problem saying why it cannot be read (`what`: "the scenario file"). */
export function readSourceText(path: string, what: string): { ok: true; text: string } | { ok: false; problems: SourceProblem[] } {
  try {
    // Refused by its size before a byte is read: parsing a large file takes many times its size in
    // memory (docs/reliability.md, "source files: depth and size").
    const { size } = statSync(path);
    if (size > SOURCE_LIMITS.maxBytes)
      return { ok: false, problems: [{ file: path, line: 1, column: 1, path: "", message: sizeMessage(what, size) }] };
    return { ok: true, text: readFileSync(path, "utf8") };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? "unreadable");
    return { ok: false, problems: [{ file: path, line: 1, column: 1, path: "", message: `cannot read ${what} (${why})` }] };
  }
}

/** `keys`: what the file's keys are, for the message about a key that is a list or a mapping. */
export function parseYamlSource(text: string, file: string, keys?: string): SourceRead {
  // Text handed over directly (not read by readSourceText) meets the same limit.
  const bytes = Buffer.byteLength(text);
  if (bytes > SOURCE_LIMITS.maxBytes)
    return { ok: false, problems: [{ file, line: 1, column: 1, path: "", message: sizeMessage("the file", bytes) }] };
  const lineCounter = new LineCounter();
  // Plainly nested far past the limit: refused before the parser's recursion pays for each level.
  const deepAt = nestingPastLimit(text, PRESCAN_DEPTH);
  if (deepAt !== undefined) {
    let line = 1;
    let lineStart = 0;
    for (let nl = text.indexOf("\n"); nl >= 0 && nl < deepAt; nl = text.indexOf("\n", nl + 1)) {
      line++;
      lineStart = nl + 1;
    }
    return { ok: false, problems: [{ file, line, column: deepAt - lineStart + 1, path: "", message: DEPTH_MESSAGE }] };
  }
  // Duplicate keys are found by duplicateKeys below: the parser's own check compares each key with
  // every earlier one of its mapping, quadratic (100,000 keys took minutes).
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false });
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  // A parser error is often the echo of another (one unclosed quote gave three): one line, at
  // the cause (rootSyntaxError), is what helps.
  // Nested past what the parser's recursion can follow: it stops there and says only that the stack ran out.
  const exhausted = doc.errors.find((e) => e.code === "RESOURCE_EXHAUSTION" && /call stack/i.test(e.message));
  if (exhausted) return { ok: false, problems: [{ file, ...at(exhausted.pos[0]), path: "", message: DEPTH_MESSAGE }] };
  if (doc.errors.length > 0) {
    const root = rootSyntaxError(text, doc.errors);
    return { ok: false, problems: [{ file, ...at(root.offset), path: "", message: root.message }] };
  }
  const deep = tooDeepOffset(doc, SOURCE_LIMITS.maxDepth);
  if (deep !== undefined) return { ok: false, problems: [{ file, ...at(deep), path: "", message: DEPTH_MESSAGE }] };
  const errors = [
    ...duplicateKeys(doc).map((e) => ({ ...e, message: `${e.message} (first on line ${at(e.firstOffset).line})` })),
    ...collectionKeys(doc, text, keys),
  ];
  if (errors.length > 0) {
    errors.sort((a, b) => a.offset - b.offset);
    return {
      ok: false,
      problems: boundProblems(
        errors.map((e) => ({ file, ...at(e.offset), path: "", message: syntaxMessage(e.code, e.message, text.slice(e.offset, e.offset + 200)) })),
      ),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (e) {
    // An alias to an anchor that is not there, or an alias bomb (the yaml library stops at 100).
    const message = `a YAML alias cannot be used here (${(e as Error).message}); write the value out in full instead of *alias`;
    return { ok: false, problems: [{ file, line: 1, column: 1, path: "", message }] };
  }
  const offsets = offsetFinder(doc);
  return { ok: true, data, positionOf: (path, key) => at(offsets(path, key)) };
}

/** The path of a value that contains itself (through YAML anchors, or objects given as data), if any. */
export function cyclePath(data: unknown, ancestors: unknown[] = [], path: Path = []): Path | undefined {
  if (data === null || typeof data !== "object") return undefined;
  if (ancestors.includes(data)) return path;
  ancestors.push(data);
  for (const [key, value] of Object.entries(data)) {
    const found = cyclePath(value, ancestors, [...path, Array.isArray(data) ? Number(key) : key]);
    if (found) return found;
  }
  ancestors.pop();
  return undefined;
}

/** The message for a value that includes itself (cyclePath found it). */
export const CYCLE_MESSAGE = "this value includes itself (a YAML alias inside its own anchor), so it never ends; write the value out in full";
