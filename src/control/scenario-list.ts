import { existsSync } from "node:fs";
import type { ScenarioInstance } from "../scenarios/instance.js";
import { ruleName, ruleSummary } from "../scenarios/rule-summary.js";
import type { ScenarioFile } from "../scenarios/schema.js";

/** A scenario a session can be created from, as GET /__sandbox/scenarios lists it. */
export interface ListedScenario {
  name: string;
  description: string;
  /** `loaded`: given at start (`serve --scenario`, or the built-in default); `library`: shipped in scenarios/. */
  source: "library" | "loaded";
  /** What each rule scripts, in the file's order. */
  rules: Array<{ name: string; summary: string }>;
}

function listed(file: ScenarioFile, source: ListedScenario["source"]): ListedScenario {
  return {
    name: file.name,
    description: file.description,
    source,
    rules: (file.rules ?? []).map((rule, i) => ({ name: ruleName(rule, i), summary: ruleSummary(rule) })),
  };
}

const byName = (a: ListedScenario, b: ListedScenario) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The scenarios of one sandbox's GET /__sandbox/scenarios: the loaded ones first, then the
 * library's, each by name; a library scenario also loaded is listed once, as loaded (a session of
 * that name is made from the loaded one). Reading and validating the library's files takes tens of
 * milliseconds of blocking work, and they change only with the package, so this sandbox reads them
 * once, when first asked (the YAML loader is imported only then, as for sessions).
 */
export class ScenarioCatalogue {
  private library: Promise<ListedScenario[]> | undefined;

  /** `libraryDir`: the library's folder (the package's scenarios/ when not given). */
  constructor(private readonly libraryDir?: string) {}

  async list(loaded: readonly ScenarioInstance[]): Promise<ListedScenario[]> {
    const fromStart = loaded.map((s) => listed(s.file, "loaded")).sort(byName);
    const names = new Set(fromStart.map((s) => s.name));
    const library = (await this.libraryList()).filter((s) => !names.has(s.name));
    return [...fromStart, ...library];
  }

  private libraryList(): Promise<ListedScenario[]> {
    this.library ??= this.readLibrary().catch((e: unknown) => {
      // Not kept: the next call tries again rather than failing for the sandbox's lifetime.
      this.library = undefined;
      throw e;
    });
    return this.library;
  }

  private async readLibrary(): Promise<ListedScenario[]> {
    const { LIBRARY_DIR, loadScenarioDir } = await import("../scenarios/library.js");
    const dir = this.libraryDir ?? LIBRARY_DIR;
    // A copy of the sandbox without its library (a bundle on its own) lists only what it loaded.
    if (!existsSync(dir)) return [];
    return loadScenarioDir(dir)
      .map((s) => listed(s.scenario, "library"))
      .sort(byName);
  }
}
