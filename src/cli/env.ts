import yargs, { type Argv, type CommandModule } from "yargs";
import { didYouMean } from "../core/source/suggest.js";

/**
 * Every flag of a command can be given as MERCHANT_SANDBOX_<FLAG> (yargs' `.env()`). A variable
 * meant for another command (MERCHANT_SANDBOX_TOKEN_TTL exported for `serve` while a CI step runs
 * `report`) must not stop this one, yet a misspelt variable must not pass unnoticed: variables that
 * are not a flag of the command being run are removed before parsing, with a one-line warning
 * when they are no flag of any command.
 */
export const ENV_PREFIX = "MERCHANT_SANDBOX_";

export function keepOnlyEnvOf(argv: string[], commands: CommandModule[], warn: (line: string) => void): void {
  if (!Object.keys(process.env).some((k) => k.startsWith(ENV_PREFIX))) return;
  const name = argv.find((a) => !a.startsWith("-"));
  const current = commands.find((c) => commandName(c) === name);
  // Each variable this command reads, and the flag it sets.
  const mine = new Map(current ? [...flagNames(current)].map((flag) => [envNameOf(flag, commandName(current)), flag] as const) : []);
  const anyCommand = new Set(commands.flatMap((c) => [...flagNames(c)].map((flag) => envNameOf(flag, commandName(c)))));
  // A short alias spelt as a variable (MERCHANT_SANDBOX_P): the variable of its flag is the one meant.
  const aliasVariables = new Map(
    commands.flatMap((c) =>
      Object.entries(optionAliases(c)).flatMap(([flag, aliases]) =>
        aliases.map((alias) => [envNameOf(alias), { alias, flag, variable: envNameOf(flag, commandName(c)) }] as const),
      ),
    ),
  );
  const renamed: Array<[string, string]> = [];
  for (const key of Object.keys(process.env)) {
    if (!key.startsWith(ENV_PREFIX)) continue;
    const flag = mine.get(key);
    if (flag !== undefined) {
      // yargs reads MERCHANT_SANDBOX_<FLAG> only: a variable of another name moves there, after
      // this loop (the name it moves to may be another command's variable, removed here first).
      if (key !== envNameOf(flag)) renamed.push([key, envNameOf(flag)]);
      continue;
    }
    if (!anyCommand.has(key)) {
      const shortOf = aliasVariables.get(key);
      const hint = shortOf
        ? `; did you mean '${shortOf.variable}'? (-${shortOf.alias} is --${shortOf.flag} on the command line only)`
        : didYouMean(key, [...anyCommand]);
      warn(`merchant-sandbox: ignoring ${key}: it is not a setting of any command${hint}`);
    }
    delete process.env[key];
  }
  for (const [from, to] of renamed) {
    process.env[to] = process.env[from];
    delete process.env[from];
  }
}

/**
 * Variables not named after their flag. calibrate's --url is the provider's test environment,
 * while MERCHANT_SANDBOX_URL is the sandbox's own URL (report and scan-logs; the compose example
 * sets it for the whole job): read as calibrate's, it would send the provider probes to the sandbox.
 */
const ENV_NAME_EXCEPTIONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  calibrate: { url: `${ENV_PREFIX}PROVIDER_URL` },
};

/**
 * The environment variable of a flag: --token-ttl is MERCHANT_SANDBOX_TOKEN_TTL (the reverse of
 * yargs' mapping), unless the command names it otherwise (ENV_NAME_EXCEPTIONS).
 */
export function envNameOf(flag: string, command?: string): string {
  return (command !== undefined ? ENV_NAME_EXCEPTIONS[command]?.[flag] : undefined) ?? ENV_PREFIX + flag.toUpperCase().replace(/-/g, "_");
}

/**
 * The command module's builder, which also appends each flag's environment variable to its
 * description, on a line of its own (`[env: MERCHANT_SANDBOX_PORT]`), so `--help` shows it; positionals get none.
 */
export function withEnvInHelp(c: CommandModule): CommandModule {
  const builder = c.builder;
  if (typeof builder !== "function") return c;
  return {
    ...c,
    builder: (y: Argv) => {
      // Only public methods: yargs' positional() declares its argument through option(), so
      // the option() calls made inside one are told apart and left as they are.
      const parser = y as unknown as { option: Declare; positional: Declare };
      const { option, positional } = parser;
      let inPositional = 0;
      parser.positional = function (this: unknown, key, opt) {
        inPositional++;
        try {
          return positional.call(this, key, opt);
        } finally {
          inPositional--;
        }
      };
      parser.option = function (this: unknown, key, opt) {
        if (inPositional > 0 || typeof key !== "string") return option.call(this, key, opt);
        const tag = `[env: ${envNameOf(key, commandName(c))}]`;
        return option.call(this, key, { ...opt, describe: opt?.describe ? `${opt.describe}\n${tag}` : tag });
      };
      return builder(y) as Argv;
    },
  };
}

/** yargs' option() and positional(), as withEnvInHelp wraps them. */
type Declare = (this: unknown, key: unknown, opt?: { describe?: string }) => unknown;

/** The name a command module is run by: `scan-logs` for "scan-logs <files..>". */
export function commandName(c: CommandModule): string {
  return String(Array.isArray(c.command) ? c.command[0] : c.command).split(" ")[0]!;
}

/** The flags a command module declares, found by running its builder on a scratch parser. */
export function optionNames(c: CommandModule): Set<string> {
  return new Set(Object.keys(declared(c).key));
}

/**
 * The flags a command reads from the environment: its options by their own names, not their short
 * aliases (`-p` is --port on the command line; MERCHANT_SANDBOX_P is no variable, only a typo of one).
 */
function flagNames(c: CommandModule): Set<string> {
  const aliases = new Set(Object.values(optionAliases(c)).flat());
  return new Set([...optionNames(c)].filter((name) => !aliases.has(name)));
}

/** Each flag's other names (`port`: `p`), as the command module declares them. */
export function optionAliases(c: CommandModule): Record<string, string[]> {
  return declared(c).alias;
}

function declared(c: CommandModule): { key: Record<string, unknown>; alias: Record<string, string[]> } {
  const probe = yargs([]);
  if (typeof c.builder === "function") c.builder(probe as unknown as Argv);
  else if (c.builder) probe.options(c.builder);
  // getOptions() is public in yargs but missing from @types/yargs.
  return (probe as unknown as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } }).getOptions();
}
