import type { CommandModule } from "yargs";
import { closest } from "../core/source/suggest.js";
import { commandName, optionNames } from "./env.js";

/**
 * yargs' strict mode says "Unknown argument: prot" and no more. This adds the closest flag of the
 * command being run (the same did-you-mean rule as a misspelt MERCHANT_SANDBOX_* variable gets):
 * "Unknown argument: prot; did you mean '--port'?". A word that is no flag (`merchant-sandbox serv`)
 * is matched against the command names instead. Any other message is returned as it is.
 */
export function withFlagSuggestions(message: string, args: readonly string[], commands: CommandModule[]): string {
  const m = /^Unknown arguments?: (.+)$/.exec(message);
  if (!m) return message;
  // yargs may list a flag twice, as typed and camel-cased (admin-tokne, adminTokne): once is enough.
  const listed = m[1]!.split(", ");
  const camel = (u: string) => u.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const unknown = listed.filter((u) => !listed.some((other) => other !== u && other.includes("-") && camel(other) === u));
  message = `Unknown argument${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}`;
  const name = args.find((a) => !a.startsWith("-"));
  const current = commands.find((c) => commandName(c) === name);
  // Long names only: an alias such as -p is no better a suggestion than the --port it stands for.
  const flags = current ? [...optionNames(current)].filter((f) => f.length > 1) : [];
  const names = commands.map(commandName);
  const typedAsFlag = (u: string) => args.some((a) => a === `-${u}` || a === `--${u}` || a.startsWith(`--${u}=`));
  const hints = unknown.flatMap((u) => {
    const flag = typedAsFlag(u) ? closest(u, flags) : undefined;
    if (flag) return [{ u, hint: `'--${flag}'` }];
    const command = !typedAsFlag(u) && !current ? closest(u, names) : undefined;
    return command ? [{ u, hint: `the command '${command}'` }] : [];
  });
  if (hints.length === 0) return message;
  if (unknown.length === 1) return `${message}; did you mean ${hints[0]!.hint}?`;
  return `${message}; did you mean ${hints.map(({ u, hint }) => `${hint} for '${u}'`).join(", ")}?`;
}
