import { formatProblem, type SourceProblem } from "../core/source/problems.js";

/**
 * What is wrong with a scenario, where (the shape every source file's problems share,
 * core/source/problems.ts). Kept apart from the loader so code that only catches it stays light.
 */
export type ScenarioProblem = SourceProblem;
export { formatProblem, MAX_PROBLEMS } from "../core/source/problems.js";

export class ScenarioLoadError extends Error {
  readonly code = "invalid_scenario";
  constructor(readonly problems: ScenarioProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ScenarioLoadError";
  }
}
