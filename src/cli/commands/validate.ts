import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { merchantIdentifiers } from "../../core/merchants.js";
import { DEFAULT_SCENARIO } from "../../scenarios/default-scenario.js";
import { formatProblem, MAX_PROBLEMS, ScenarioLoadError, type ScenarioProblem } from "../../scenarios/problems.js";
import type { ScenarioFile } from "../../scenarios/schema.js";

/**
 * `merchant-sandbox validate FILE…`: checks scenario files without starting anything. One line per
 * problem (file:line:column: path: message); exit 0 when all are valid, 1 otherwise. Valid files are
 * also checked together, and against the built-in default scenario (unless one replaces it), as
 * `serve` would load them: two scenarios cannot share a merchant's credentials.
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
    const { loadScenarioFile, positionIn } = await import("../../scenarios/load.js");
    const problems: ScenarioProblem[] = [];
    const loaded: Array<{ scenario: ScenarioFile; source: string }> = [];
    for (const file of args.files) {
      try {
        loaded.push({ scenario: loadScenarioFile(file), source: file });
      } catch (e) {
        if (!(e instanceof ScenarioLoadError)) throw e;
        problems.push(...e.problems);
      }
    }
    problems.push(...placed(clashes(loaded), positionIn));
    problems.push(...(await profileProblems(loaded, positionIn)));
    for (const p of problems) process.stdout.write(formatProblem(p) + "\n");
    for (const l of loaded) {
      if (!problems.some((p) => p.file === l.source)) process.stdout.write(`${l.source}: ok (scenario '${l.scenario.name}')\n`);
    }
    process.exitCode = problems.length === 0 ? 0 : 1;
  },
};

/**
 * A scenario's settings.profile must load as `serve` would load it: an unknown name is placed at the
 * setting, a profile file's own problems in that file.
 */
async function profileProblems(loaded: Array<{ scenario: ScenarioFile; source: string }>, positionIn: PositionIn): Promise<ScenarioProblem[]> {
  const named = loaded.filter((l) => l.scenario.settings?.profile !== undefined);
  if (named.length === 0) return [];
  const { resolveProfile, ProfileLoadError } = await import("../../profiles/load.js");
  const problems: ScenarioProblem[] = [];
  for (const { scenario, source } of named) {
    try {
      resolveProfile(scenario.settings!.profile!, "settings.profile", dirname(source));
    } catch (e) {
      if (!(e instanceof ProfileLoadError)) throw e;
      if (e.problems.length > 0) problems.push(...e.problems);
      else {
        const at = positionIn(readFileSync(source, "utf8"), ["settings", "profile"]);
        problems.push({ file: source, ...at, path: "settings.profile", message: e.message.replace(/^settings\.profile: /, "") });
      }
    }
  }
  return problems;
}

type PositionIn = (text: string, path: Array<string | number>) => { line: number; column: number };

/** A clash before it is placed in its file (placing one means parsing the file: see `placed`). */
interface Clash {
  source: string;
  path: Array<string | number>;
  message: string;
}

/** Credentials or names that two scenarios share, reported at the later file's line. */
function clashes(loaded: Array<{ scenario: ScenarioFile; source: string }>): Clash[] {
  const all = loaded.some((l) => l.scenario.name === "default") ? loaded : [{ scenario: DEFAULT_SCENARIO, source: "built-in" }, ...loaded];
  const owners = new Map<string, { name: string; source: string }>();
  const problems: Clash[] = [];
  for (const { scenario, source } of all) {
    const owner = { name: scenario.name, source };
    const nameOwner = owners.get(`name:${scenario.name}`);
    if (nameOwner)
      problems.push({
        source,
        path: ["name"],
        message: `scenario '${scenario.name}' is also defined in ${nameOwner.source}; give each its own name`,
      });
    owners.set(`name:${scenario.name}`, owner);
    scenario.merchants.forEach((m, i) => {
      for (const identifier of merchantIdentifiers({ id: m.id, apiKey: m.api_key, paymentToken: m.payment_token, login: m.login })) {
        const key = `${identifier.name}:${identifier.value}`;
        const what = `${identifier.name === "id" ? "merchant " : ""}${identifier.shown}`;
        const other = owners.get(key);
        if (other && other.name !== scenario.name) {
          const hint = other.source === "built-in" ? "; to change the default merchant, name your scenario 'default'" : "";
          problems.push({
            source,
            path: ["merchants", i, ...identifier.field],
            message: `${what} is already used by scenario '${other.name}' (${other.source}); the credentials select the scenario, so each scenario needs its own${hint}`,
          });
        } else owners.set(key, owner);
      }
    });
  }
  return problems;
}

/**
 * The first MAX_PROBLEMS clashes placed in their files, then "and K more" where the next one is:
 * each placing reads and parses the file, so thousands of clashing merchants would cost thousands
 * of parses.
 */
function placed(all: Clash[], positionIn: PositionIn): ScenarioProblem[] {
  const shown = all.slice(0, MAX_PROBLEMS).map((c) => problem(positionIn, c));
  if (all.length > MAX_PROBLEMS) {
    const more = all.length - MAX_PROBLEMS;
    const next = problem(positionIn, all[MAX_PROBLEMS]!);
    shown.push({ ...next, path: "", message: `and ${more} more clash${more === 1 ? "" : "es"} from here on; fix the ones above and validate again` });
  }
  return shown;
}

function problem(positionIn: PositionIn, { source, path, message }: Clash): ScenarioProblem {
  let position = { line: 1, column: 1 };
  try {
    position = positionIn(readFileSync(source, "utf8"), path);
  } catch {
    // The built-in scenario has no file: 1:1.
  }
  const shown = path.reduce<string>((acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), "");
  return { file: source, ...position, path: shown, message };
}
