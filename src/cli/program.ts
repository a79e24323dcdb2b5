import yargs, { type CommandModule } from "yargs";
import { commandName, keepOnlyEnvOf, optionAliases, withEnvInHelp } from "./env.js";
import { inGivenTerms } from "./given-values.js";
import { helpLine } from "./help-line.js";
import { hideBin } from "yargs/helpers";
import { withFlagSuggestions } from "./unknown-flags.js";
import { joinPemValues } from "./pem-values.js";
import { calibrateCommand } from "./commands/calibrate.js";
import { recordCommand } from "./commands/record.js";
import { errorsCommand } from "./commands/errors.js";
import { reportCommand } from "./commands/report.js";
import { scanLogsCommand } from "./commands/scan-logs.js";
import { scenariosCommand } from "./commands/scenarios.js";
import { schemaCommand } from "./commands/schema.js";
import { serveCommand } from "./commands/serve.js";
import { validateCommand } from "./commands/validate.js";
import { VERSION } from "../core/version.js";
import type { EarlyKey } from "./early-key.js";

/**
 * merchant-sandbox's command line. One yargs command module per file under commands/. Every flag
 * can also be set as an environment variable: --token-ttl as MERCHANT_SANDBOX_TOKEN_TTL, and so on.
 * A bad flag value prints one line that says what is wrong and exits with code 2.
 *
 * Node runs it with 2 MB semispaces (the shebang, `npm start` and the image say so): the server
 * answers small requests, and a smaller young generation keeps RSS under load lower at the same
 * throughput (docs/performance.md#memory-the-young-generation). The flag only works at process start.
 */
export const EXIT_USAGE = 2;

/**
 * Runs the command line `argv` (as process.argv: node, the script, then the arguments), with the
 * start key main.ts began generating for `serve`, if it did.
 */
export async function runCli(argv: string[], earlyKey: EarlyKey | undefined): Promise<void> {
  // A reader that stops early (`merchant-sandbox scenarios | head -1`) closes the pipe: that ends the
  // command quietly, as it does any Unix tool, instead of an unhandled EPIPE. `serve` replaces this
  // handler: a log reader going away must not stop the sandbox.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    throw e;
  });

  const commands = [
    serveCommand(earlyKey),
    validateCommand,
    scenariosCommand,
    schemaCommand,
    errorsCommand,
    reportCommand,
    scanLogsCommand,
    calibrateCommand,
    recordCommand,
  ].map((c) => withEnvInHelp(c as CommandModule));
  const args = joinPemValues(hideBin(argv));
  keepOnlyEnvOf(args, commands, (line) => process.stderr.write(line + "\n"));

  const parser = yargs(args)
    .scriptName("merchant-sandbox")
    .usage("$0 <command> [options]\n\nA strict sandbox of the merchant payment API's authentication.")
    .env("MERCHANT_SANDBOX")
    .command(commands)
    .demandCommand(1, "Name a command: merchant-sandbox serve starts the sandbox on http://127.0.0.1:4010.")
    .strict()
    .version(VERSION)
    .help()
    .alias("h", "help")
    // Wrapping the help text slows yargs' layout: wrapped only when it will be shown (docs/performance.md#start).
    .wrap(argv.some((a) => a === "--help" || a === "-h") ? Math.min(110, process.stdout.columns || 100) : null)
    .fail((msg, err) => {
      const current = commands.find((c) => commandName(c) === args.find((a) => !a.startsWith("-")));
      const name = current && commandName(current);
      const said = withFlagSuggestions((msg ?? err?.message ?? "invalid command line").replace(/\s*\n\s*/g, " "), args, commands);
      const text = current ? inGivenTerms(said, { args, command: name, aliases: optionAliases(current) }, process.env) : said;
      process.stderr.write(`merchant-sandbox: ${text}\n${helpLine(name)}\n`);
      process.exit(EXIT_USAGE);
    });
  skipHelpCache(parser);
  await parser.parseAsync();
}

/**
 * yargs lays out the whole help text (and keeps it) right after it calls a command's handler, in
 * case the handler then asks for help: ours never do, and for serve's 40 flags that layout was a
 * large part of every start (docs/performance.md#start). `--help` and usage errors lay
 * it out when they print it, as before. The hook is yargs' internal usage instance; should a
 * yargs version not have it, the cache is simply kept (a start is slower, nothing breaks), and
 * test/unit/cli-help-cache.test.ts fails so the hook gets updated. Says whether it took hold.
 */
export function skipHelpCache(parser: unknown): boolean {
  const usage = usageInstanceOf(parser);
  if (typeof usage?.cacheHelpMessage !== "function") return false;
  usage.cacheHelpMessage = () => undefined;
  return true;
}

/** yargs' internal usage instance, the object whose cacheHelpMessage a command run calls; undefined if this yargs has none. */
export function usageInstanceOf(parser: unknown): { cacheHelpMessage?: () => void } | undefined {
  return (parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } })
    .getInternalMethods?.()
    .getUsageInstance?.();
}
