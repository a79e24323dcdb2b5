/**
 * What is wrong with a scenario, where. Kept apart from the loader (which pulls in the YAML parser
 * and zod) so that code which only reports or catches these errors stays light at start.
 */
export interface ScenarioProblem {
  file: string;
  line: number;
  column: number;
  /** Where in the document, e.g. `rules[2].match.endpoint`. */
  path: string;
  message: string;
}

export class ScenarioLoadError extends Error {
  readonly code = "invalid_scenario";
  constructor(readonly problems: ScenarioProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ScenarioLoadError";
  }
}

/** `file:line:column: path: message`, the shape editors and CI annotations understand. */
export function formatProblem(p: ScenarioProblem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.path ? `${p.path}: ` : ""}${p.message}`;
}
