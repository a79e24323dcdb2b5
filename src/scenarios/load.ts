import { readFileSync } from "node:fs";
import { LineCounter, parseDocument } from "yaml";
import { semanticProblems } from "./cross-checks.js";
import { pathText, type Path } from "../core/source/data-problems.js";
import { explain, withoutConsequences } from "./explain-issues.js";
import { boundProblems, ScenarioLoadError } from "./problems.js";
import { scenarioSchema, type ScenarioFile } from "./schema.js";
import { collectionKeys, duplicateKeys, syntaxMessage } from "../core/source/yaml-syntax.js";
import { offsetFinder } from "../core/source/yaml-positions.js";

/**
 * Reading a scenario file (YAML, or JSON, which YAML 1.2 reads too) into a validated
 * ScenarioFile. Every problem is reported with file, line and column, what is wrong and how to
 * fix it; a file with any problem yields no scenario at all (nothing half-loads).
 */

export { ScenarioLoadError, formatProblem, type ScenarioProblem } from "./problems.js";
export { pathText, type Path } from "../core/source/data-problems.js";
export { positionIn } from "../core/source/yaml-positions.js";

export function loadScenarioFile(path: string): ScenarioFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? "unreadable");
    throw new ScenarioLoadError([{ file: path, line: 1, column: 1, path: "", message: `cannot read the scenario file (${why})` }]);
  }
  return parseScenarioText(text, path);
}

export function parseScenarioText(text: string, file = "<scenario>"): ScenarioFile {
  const lineCounter = new LineCounter();
  // Duplicate keys are found by duplicateKeys below: the parser's own check compares each key with
  // every earlier one of its mapping, quadratic (100,000 keys took minutes).
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false });
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const errors = [
    ...doc.errors.map((e) => ({ offset: e.pos[0], code: e.code as string, message: e.message })),
    ...duplicateKeys(doc),
    ...collectionKeys(doc, text),
  ];
  if (errors.length > 0) {
    errors.sort((a, b) => a.offset - b.offset);
    throw new ScenarioLoadError(
      boundProblems(
        errors.map((e) => ({ file, ...at(e.offset), path: "", message: syntaxMessage(e.code, e.message, text.slice(e.offset, e.offset + 200)) })),
      ),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (e) {
    // An alias to an anchor that is not there, or an alias bomb (the yaml library stops at 100).
    const message = `a YAML alias cannot be used here (${(e as Error).message}); write the value out in full instead of *alias`;
    throw new ScenarioLoadError([{ file, line: 1, column: 1, path: "", message }]);
  }
  const offsets = offsetFinder(doc);
  return validateScenario(data, file, (path, key) => at(offsets(path, key)));
}

/** The path of a value that contains itself (through YAML anchors, or objects given as data), if any. */
function cyclePath(data: unknown, ancestors: unknown[] = [], path: Path = []): Path | undefined {
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

/**
 * Validates a scenario given as data (a parsed file, or an object passed to createSandbox).
 * `positionOf` maps a path to its line and column in the source text, when there is one.
 */
export function validateScenario(
  data: unknown,
  file: string,
  positionOf: (path: Path, key?: string) => { line: number; column: number } = () => ({ line: 1, column: 1 }),
): ScenarioFile {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ScenarioLoadError([
      { file, line: 1, column: 1, path: "", message: "a scenario holds one mapping with name, description, merchants and rules" },
    ]);
  }
  const cycle = cyclePath(data);
  if (cycle) {
    const message = "this value includes itself (a YAML alias inside its own anchor), so it never ends; write the value out in full";
    throw new ScenarioLoadError([{ file, ...positionOf(cycle), path: pathText(cycle), message }]);
  }
  const result = scenarioSchema.safeParse(data);
  // Cross-field checks run on the raw data too, so every problem is reported at once.
  const explained = [
    ...(result.success ? [] : withoutConsequences(result.error.issues).flatMap((issue) => explain(issue, data))),
    ...semanticProblems(data as Record<string, unknown>),
  ];
  if (result.success && explained.length === 0) return result.data;
  const problems = explained.map((p) => ({
    file,
    ...positionOf(p.path, p.key),
    path: pathText(p.key === undefined ? p.path : [...p.path, p.key]),
    message: p.message,
  }));
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  throw new ScenarioLoadError(boundProblems(problems));
}
