import { envNameOf } from "./env.js";

/**
 * A usage message in the terms the user gave the value in. yargs hands a command the value alone:
 * `--port abc` arrives as NaN, and MERCHANT_SANDBOX_PORT=abc arrives the same way, so a message
 * built from it says "got 'NaN'" and names a flag the user may never have typed. Every `--flag`
 * the message names that was not on the command line but came from its environment variable is
 * named by that variable, and a 'NaN' is the text as given.
 */
export function inGivenTerms(
  message: string,
  given: { args: readonly string[]; command: string | undefined; aliases?: Readonly<Record<string, readonly string[]>> },
  env: NodeJS.ProcessEnv,
): string {
  const { args, command, aliases = {} } = given;
  let raw: string | undefined;
  // `--port …` in our messages; `Argument: alg, Given: …` in yargs' own (a value not among the choices).
  const named = message.replace(/(--|^Invalid values: Argument: )([a-z][a-z0-9-]*)/g, (whole, before: string, flag: string, at: number) => {
    const typed = typedValue([flag, ...(aliases[flag] ?? [])], args);
    // yargs read MERCHANT_SANDBOX_<FLAG> (keepOnlyEnvOf moved a differently named variable there).
    const fromEnv = typed === undefined ? env[envNameOf(flag)] : undefined;
    if (at === 0) raw = typed ?? fromEnv;
    if (fromEnv === undefined) return whole;
    return before === "--" ? envNameOf(flag, command) : `${before}${envNameOf(flag, command)}`;
  });
  // A number that did not parse: the value the message is about is its first flag's.
  // A function, not a replacement string: the text given may hold `$&` and the like.
  return raw === undefined ? named : named.replace(/'NaN'/g, () => `'${shown(raw!)}'`);
}

/**
 * The last value a flag was given on the command line under any of its names (`--port v`,
 * `--port=v`, `-p v`), or undefined when it was not typed.
 */
function typedValue(names: readonly string[], args: readonly string[]): string | undefined {
  const dashed = names.map((n) => (n.length === 1 ? `-${n}` : `--${n}`));
  for (let i = args.length - 1; i >= 0; i--) {
    const a = args[i]!;
    const eq = dashed.find((d) => a.startsWith(`${d}=`));
    if (eq !== undefined) return a.slice(eq.length + 1);
    if (dashed.includes(a) || dashed.some((d) => a === `--no-${d.slice(2)}`)) {
      const next = args[i + 1];
      return next !== undefined && !next.startsWith("--") ? next : "";
    }
  }
  return undefined;
}

/** At most 64 characters of what was given, on one line. */
function shown(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 64 ? `${line.slice(0, 64)}…` : line;
}
