import { dirname, isAbsolute, resolve } from "node:path";
import { semanticProblems } from "./cross-checks.js";
import type { Path } from "../core/source/data-problems.js";
import { explain } from "./explain-issues.js";
import { ScenarioLoadError } from "./problems.js";
import { scenarioSchema, type ScenarioFile } from "./schema.js";
import { parseYamlSource, readSourceText } from "../core/source/yaml-source.js";
import { validateData } from "../core/source/validate-data.js";
import { merchantsMessage, SOURCE_LIMITS } from "../core/source/source-limits.js";

/**
 * Reading a scenario file (YAML, or JSON, which YAML 1.2 reads too) into a validated
 * ScenarioFile. Every problem is reported with file, line and column, what is wrong and how to
 * fix it; a file with any problem yields no scenario at all (nothing half-loads).
 */

export { ScenarioLoadError, formatProblem, type ScenarioProblem } from "./problems.js";
export { pathText, type Path } from "../core/source/data-problems.js";
export { positionIn } from "../core/source/yaml-positions.js";

export function loadScenarioFile(path: string): ScenarioFile {
  const read = readSourceText(path, "the scenario file");
  if (!read.ok) throw new ScenarioLoadError(read.problems);
  return withProfilePathFrom(parseScenarioText(read.text, path), path);
}

/**
 * A settings.profile that is a file path is relative to the scenario file: made absolute here, so
 * it means the same file wherever the scenario is used later (a session's copy, another folder).
 */
function withProfilePathFrom(scenario: ScenarioFile, file: string): ScenarioFile {
  const profile = scenario.settings?.profile;
  if (profile === undefined || isAbsolute(profile) || !(/[/\\]/.test(profile) || /\.(ya?ml|json)$/i.test(profile))) return scenario;
  return { ...scenario, settings: { ...scenario.settings, profile: resolve(dirname(file), profile) } };
}

export function parseScenarioText(text: string, file = "<scenario>"): ScenarioFile {
  const parsed = parseYamlSource(text, file);
  if (!parsed.ok) throw new ScenarioLoadError(parsed.problems);
  return validateScenario(parsed.data, file, parsed.positionOf);
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
  // Before anything reads them: each merchant is checked against every other scenario's.
  const merchants = (data as { merchants?: unknown }).merchants;
  if (Array.isArray(merchants) && merchants.length > SOURCE_LIMITS.maxMerchants) {
    throw new ScenarioLoadError([{ file, ...positionOf(["merchants"]), path: "merchants", message: merchantsMessage(merchants.length) }]);
  }
  // Cross-field checks run on the raw data too, so every problem is reported at once.
  const checked = validateData(scenarioSchema, data, file, positionOf, explain, semanticProblems);
  if (checked.ok) return checked.value;
  throw new ScenarioLoadError(checked.problems);
}
