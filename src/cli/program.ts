import yargs, { type CommandModule } from "yargs";
import { keepOnlyEnvOf } from "./env.js";
import { hideBin } from "yargs/helpers";
import { calibrateCommand } from "./commands/calibrate.js";
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
 * answers small requests, and a smaller young generation keeps RSS under load ~25 MB lower at the
 * same throughput (measured with npm run bench). The flag only works at process start.
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
  ] as CommandModule[];
  keepOnlyEnvOf(hideBin(argv), commands, (line) => process.stderr.write(line + "\n"));

  await yargs(hideBin(argv))
    .scriptName("merchant-sandbox")
    .usage("$0 <command> [options]\n\nA strict sandbox of the merchant payment API's authentication.")
    .env("MERCHANT_SANDBOX")
    .command(commands)
    .demandCommand(1, "Name a command: merchant-sandbox serve starts the sandbox on http://127.0.0.1:4010.")
    .strict()
    .version(VERSION)
    .help()
    .alias("h", "help")
    // yargs lays out (and caches) the help text on every run; wrapping it costs ~50 ms at start,
    // so it is wrapped only when it will be shown.
    .wrap(argv.some((a) => a === "--help" || a === "-h") ? Math.min(110, process.stdout.columns || 100) : null)
    .fail((msg, err) => {
      const text = (msg ?? err?.message ?? "invalid command line").replace(/\s*\n\s*/g, " ");
      process.stderr.write(`merchant-sandbox: ${text}\nRun 'merchant-sandbox --help' for the options.\n`);
      process.exit(EXIT_USAGE);
    })
    .parseAsync();
}
