import type { z } from "zod";
import { type Explained, pathText } from "./data-problems.js";
import { withoutConsequences } from "./explain-issues.js";
import { boundProblems, type SourceProblem } from "./problems.js";
import { DEPTH_MESSAGE, tooDeepPath } from "./source-limits.js";
import { CYCLE_MESSAGE, cyclePath, type PositionOf } from "./yaml-source.js";

/**
 * A source file's data checked against its schema, the way every loader does it: a value nested
 * deeper than SOURCE_LIMITS.maxDepth, then a value that includes itself, is refused first; then the schema's complaints (in the loader's words, `explain`)
 * and the loader's own cross-field checks (`crossChecks`, run on the raw data too, so every problem
 * is reported at once), each placed at its file:line:column, in file order, at most MAX_PROBLEMS.
 * Returns the parsed value, or the problems: the caller throws its own load error with them.
 */
export function validateData<T>(
  schema: z.ZodType<T>,
  data: unknown,
  file: string,
  positionOf: PositionOf,
  explain: (issue: z.core.$ZodIssue, data: unknown) => Explained[],
  crossChecks: (data: Record<string, unknown>) => Explained[],
): { ok: true; value: T } | { ok: false; problems: SourceProblem[] } {
  // First: the checks below (and the loaders' own) walk the data recursively.
  const deep = tooDeepPath(data);
  if (deep) return { ok: false, problems: [{ file, ...positionOf(deep), path: pathText(deep), message: DEPTH_MESSAGE }] };
  const cycle = cyclePath(data);
  if (cycle) return { ok: false, problems: [{ file, ...positionOf(cycle), path: pathText(cycle), message: CYCLE_MESSAGE }] };
  const result = schema.safeParse(data);
  const explained = [
    ...(result.success ? [] : withoutConsequences(result.error.issues).flatMap((issue) => explain(issue, data))),
    ...crossChecks(data as Record<string, unknown>),
  ];
  if (result.success && explained.length === 0) return { ok: true, value: result.data };
  const problems = explained.map((p) => ({
    file,
    ...positionOf(p.path, p.key),
    path: pathText(p.key === undefined ? p.path : [...p.path, p.key]),
    message: p.message,
  }));
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return { ok: false, problems: boundProblems(problems) };
}
