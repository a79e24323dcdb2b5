import { plainText } from "../echo.js";

/**
 * What is wrong with a source file (a scenario, a profile), where. Kept apart from the loaders
 * (which pull in the YAML parser and zod) so that code which only reports or catches these errors
 * stays light at start.
 */

export interface SourceProblem {
  file: string;
  line: number;
  column: number;
  /** Where in the document, e.g. `rules[2].match.endpoint`. */
  path: string;
  message: string;
}

/**
 * `file:line:column: path: message`, the shape editors and CI annotations understand. A message
 * made for the control plane may quote a request through `echo` (a session's scenario name): here,
 * outside any answer, it reads as plain text.
 */
export function formatProblem(p: SourceProblem): string {
  return plainText(`${p.file}:${p.line}:${p.column}: ${p.path ? `${p.path}: ` : ""}${p.message}`);
}

/**
 * How many problems one file reports at most. A generated file can hold 100,000 unknown keys:
 * reporting each (placed, with a did-you-mean) took over a minute and buried the first ones.
 */
export const MAX_PROBLEMS = 50;

/**
 * The first MAX_PROBLEMS of `problems` (already in the order to show them), then one more line,
 * where the first left-out problem is, saying how many were left out.
 */
export function boundProblems(problems: SourceProblem[]): SourceProblem[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const next = problems[MAX_PROBLEMS]!;
  const more = problems.length - MAX_PROBLEMS;
  return [
    ...problems.slice(0, MAX_PROBLEMS),
    {
      file: next.file,
      line: next.line,
      column: next.column,
      path: "",
      message: `and ${more} more problem${more === 1 ? "" : "s"} from here on; fix the ones above and validate again`,
    },
  ];
}
