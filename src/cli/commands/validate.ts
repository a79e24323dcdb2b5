import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { ConfigError } from "../../core/config.js";
import { createSandbox } from "../../core/sandbox.js";
import { loadScenarioFile, ScenarioLoadError, type ScenarioProblem, formatProblem } from "../../scenarios/load.js";
import type { LoadedScenario } from "../../scenarios/library.js";

/**
 * `merchant-sandbox validate FILE…`: checks scenario files without starting anything. One line per
 * problem (file:line:column: path: message); exit 0 when all are valid, 1 otherwise. Files that are
 * valid one by one are also loaded together, as `serve` would, to catch clashes between them.
 */
interface ValidateArgs {
  files: string[];
}

export const validateCommand: CommandModule<object, ValidateArgs> = {
  command: "validate <files..>",
  describe: "Check scenario files (YAML or JSON) without starting the server",
  builder: (y: Argv) =>
    y
      .positional("files", { type: "string", array: true, demandOption: true, describe: "Scenario files" })
      .example("$0 validate scenarios/*.yaml", "exit 1 and one line per problem if any file is invalid") as unknown as Argv<ValidateArgs>,
  handler: async (args: ArgumentsCamelCase<ValidateArgs>) => {
    const problems: ScenarioProblem[] = [];
    const loaded: LoadedScenario[] = [];
    for (const file of args.files) {
      try {
        loaded.push({ scenario: loadScenarioFile(file), source: file });
      } catch (e) {
        if (!(e instanceof ScenarioLoadError)) throw e;
        problems.push(...e.problems);
      }
    }
    if (problems.length === 0 && loaded.length > 1) {
      try {
        await createSandbox({ scenarios: loaded, frozenAt: 0 });
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push({ file: args.files.join(", "), line: 1, column: 1, path: "", message: e.message });
      }
    }
    for (const p of problems) process.stdout.write(formatProblem(p) + "\n");
    for (const l of loaded) if (!problems.some((p) => p.file === l.source)) process.stdout.write(`${l.source}: ok (scenario '${l.scenario.name}')\n`);
    process.exitCode = problems.length === 0 ? 0 : 1;
  },
};
