import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import type { LoadedScenario } from "../../scenarios/library.js";
import { ScenarioLoadError } from "../../scenarios/problems.js";

/** `merchant-sandbox scenarios`: the available scenarios, their descriptions and api_keys. */
interface ScenariosArgs {
  scenariosDir?: string;
  json: boolean;
}

export const scenariosCommand: CommandModule<object, ScenariosArgs> = {
  command: "scenarios",
  describe: "List the scenario library (and a folder's scenarios) with descriptions and api_keys",
  builder: (y: Argv) =>
    y
      .option("scenarios-dir", { type: "string", describe: "Also list the scenarios of this folder" })
      .option("json", { type: "boolean", default: false, describe: "Print JSON instead of text" }) as unknown as Argv<ScenariosArgs>,
  handler: async (args: ArgumentsCamelCase<ScenariosArgs>) => {
    const { LIBRARY_DIR, libraryNames, loadScenarioDir, resolveScenario } = await import("../../scenarios/library.js");
    let list: LoadedScenario[];
    try {
      list = [...libraryNames().map((n) => resolveScenario(n)), ...(args.scenariosDir ? loadScenarioDir(args.scenariosDir) : [])];
    } catch (e) {
      if (!(e instanceof ScenarioLoadError)) throw e;
      process.stderr.write(`merchant-sandbox: ${e.message}\n`);
      process.exit(1);
    }
    const rows = list.map(({ scenario, source }) => ({
      name: scenario.name,
      description: scenario.description,
      api_keys: scenario.merchants.map((m) => m.api_key),
      source: source.startsWith(LIBRARY_DIR) ? "library" : source,
    }));
    if (args.json) {
      process.stdout.write(JSON.stringify(rows, null, 2) + "\n");
      return;
    }
    for (const r of rows) {
      process.stdout.write(`${r.name}  (api_key: ${r.api_keys.join(", ")}${r.source === "library" ? "" : `; ${r.source}`})\n    ${r.description}\n`);
    }
  },
};
