import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { didYouMeanNames } from "../core/source/suggest.js";
import { loadScenarioFile } from "./load.js";
import { ScenarioLoadError } from "./problems.js";
import type { ScenarioFile } from "./schema.js";

/**
 * Where scenarios come from: the built-in library (the package's scenarios/ folder), a file path,
 * or every file of a folder. A name without a path separator or extension is looked up in the
 * library; anything else is a file.
 */

/** The package's own scenarios/ folder (two levels up from src/scenarios and dist/scenarios). */
export const LIBRARY_DIR = fileURLToPath(new URL("../../scenarios/", import.meta.url));
const EXTENSIONS = [".yaml", ".yml", ".json"];

export interface LoadedScenario {
  scenario: ScenarioFile;
  /** The file it came from, for messages. */
  source: string;
}

export function isScenarioFileName(name: string): boolean {
  return EXTENSIONS.some((ext) => name.endsWith(ext)) && !name.endsWith(".schema.json");
}

/**
 * A library name (`token-endpoint-outage`) or a file path to a validated scenario. `alsoKnown`:
 * other names the caller takes (a session takes the loaded scenarios' too), for the did-you-mean.
 */
export function resolveScenario(
  nameOrPath: string,
  libraryDir = LIBRARY_DIR,
  alsoKnown: readonly string[] = [],
  quote: (name: string) => string = (name) => name,
): LoadedScenario {
  const looksLikePath = /[\\/]/.test(nameOrPath) || EXTENSIONS.some((ext) => nameOrPath.endsWith(ext));
  if (looksLikePath) {
    const file = resolve(nameOrPath);
    return { scenario: loadScenarioFile(file), source: file };
  }
  for (const ext of EXTENSIONS) {
    const file = join(libraryDir, nameOrPath + ext);
    if (existsSync(file)) return { scenario: loadScenarioFile(file), source: file };
  }
  const known = libraryNames(libraryDir);
  throw new ScenarioLoadError([
    {
      file: nameOrPath,
      line: 1,
      column: 1,
      path: "",
      message: `no scenario named '${quote(nameOrPath)}' in the library${didYouMeanNames(nameOrPath, [...new Set([...alsoKnown, ...known])])}; use a file path, or one of: ${known.join(", ")}`,
    },
  ]);
}

/** Every scenario file of a folder, in name order; any invalid file fails the whole load. */
export function loadScenarioDir(dir: string): LoadedScenario[] {
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    entries = readdirSync(dir).filter(isScenarioFileName).sort();
  } catch {
    throw new ScenarioLoadError([
      { file: dir, line: 1, column: 1, path: "", message: "cannot read the scenarios folder (missing, or not a folder)" },
    ]);
  }
  const loaded: LoadedScenario[] = [];
  const problems: ScenarioLoadError["problems"] = [];
  for (const entry of entries) {
    const file = join(dir, entry);
    try {
      loaded.push({ scenario: loadScenarioFile(file), source: file });
    } catch (e) {
      if (!(e instanceof ScenarioLoadError)) throw e;
      problems.push(...e.problems);
    }
  }
  if (problems.length) throw new ScenarioLoadError(problems);
  return loaded;
}

export function libraryNames(libraryDir = LIBRARY_DIR): string[] {
  try {
    return readdirSync(libraryDir)
      .filter(isScenarioFileName)
      .map((f) => f.replace(/\.(ya?ml|json)$/, ""))
      .sort();
  } catch {
    return [];
  }
}
