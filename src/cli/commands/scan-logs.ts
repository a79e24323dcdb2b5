import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { type Hit, scanFile, UnreadableFile } from "../log-file-scan.js";
import { baseUrl, CliTrouble, controlRequest, EXIT_FINDINGS, EXIT_TROUBLE } from "./report.js";

/**
 * `merchant-sandbox scan-logs --url URL FILE…`: looks for the sandbox's secrets in clear in log
 * files (a merchant's api_secret, payment token or password, or a JWT the sandbox signed), with
 * POST /__sandbox/scan. One line per hit, `file:line:column: <kind> of merchant <id> in clear text`,
 * never the secret. Files are streamed and sent in chunks (../log-file-scan.ts); only regular files
 * are read, at most --max-bytes of each. Exit 1 on any hit, 0 when clean, 2 when a file cannot be
 * read (or not whole) or the sandbox cannot be reached.
 */

interface ScanLogsArgs {
  url: string;
  files: string[];
  adminToken?: string;
  maxBytes: number;
}

/** A log larger than this is more likely a mistake (a device, a file that never stops growing) than a log. */
export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;

export const scanLogsCommand: CommandModule<object, ScanLogsArgs> = {
  command: "scan-logs <files..>",
  describe: "Find the sandbox's secrets and tokens in clear in log files; exit 1 on any",
  builder: (y: Argv) =>
    y
      .positional("files", { type: "string", array: true, demandOption: true, describe: "Log files to scan" })
      .option("url", { type: "string", demandOption: true, describe: "The sandbox's base URL, e.g. http://localhost:4010" })
      .option("admin-token", { type: "string", describe: "The sandbox's --admin-token, if it was started with one" })
      .option("max-bytes", {
        type: "number",
        default: DEFAULT_MAX_BYTES,
        describe: "Most bytes read from one file; a larger one is an error (exit 2), not a pass",
      })
      .check((a) => {
        if (!Number.isInteger(a.maxBytes) || (a.maxBytes as number) < 1)
          throw new Error(`--max-bytes must be a whole number of bytes, at least 1 (got '${String(a.maxBytes)}').`);
        return true;
      })
      .example(
        "$0 scan-logs --url http://localhost:4010 ./logs/*.log",
        "file:line:column of every secret in clear; exit 1 if any",
      ) as unknown as Argv<ScanLogsArgs>,
  handler: async (args: ArgumentsCamelCase<ScanLogsArgs>) => {
    let base: string;
    try {
      base = baseUrl(args.url);
    } catch (e) {
      return trouble(e);
    }
    let hits = 0;
    let unreadable = 0;
    let lines = 0;
    const filesWithHits = new Set<string>();
    for (const file of args.files) {
      try {
        const scanned = await scanFile(
          file,
          args.maxBytes,
          (text) => controlRequest(base, "POST", "/__sandbox/scan", args.adminToken, { text }).then(hitsOf),
          (hit) => {
            hits++;
            filesWithHits.add(file);
            process.stdout.write(`${file}:${hit.line}:${hit.column}: ${hit.kind} of merchant ${hit.merchant} in clear text\n`);
          },
        );
        lines += scanned;
      } catch (e) {
        if (e instanceof UnreadableFile) {
          unreadable++;
          process.stderr.write(`merchant-sandbox: ${file}: ${e.message}\n`);
          continue;
        }
        // The sandbox cannot be reached or refused: nothing more can be scanned.
        return trouble(e);
      }
    }
    const files = args.files.length - unreadable;
    // A file that could not be read was not scanned: saying "no secret in clear text" would pass a
    // CI gate on logs nobody looked at. Its error line above is the whole answer (exit 2).
    if (unreadable > 0 && hits === 0) {
      process.exitCode = EXIT_TROUBLE;
      return;
    }
    const summary =
      hits > 0
        ? `${hits} secret${hits === 1 ? "" : "s"} in clear text in ${filesWithHits.size} of ${files} file${files === 1 ? "" : "s"} (${lines} line${lines === 1 ? "" : "s"}). Redact them before they are logged.`
        : `no secret in clear text in ${files} file${files === 1 ? "" : "s"} (${lines} line${lines === 1 ? "" : "s"}).`;
    process.stderr.write(`merchant-sandbox: ${summary}\n`);
    process.exitCode = unreadable > 0 ? EXIT_TROUBLE : hits > 0 ? EXIT_FINDINGS : 0;
  },
};

function trouble(e: unknown): void {
  if (!(e instanceof CliTrouble)) throw e;
  process.stderr.write(`merchant-sandbox: ${e.message}\n`);
  process.exitCode = EXIT_TROUBLE;
}

function hitsOf(body: unknown): Hit[] {
  const hits = (body as { hits?: unknown } | null)?.hits;
  if (!Array.isArray(hits))
    throw new CliTrouble(`POST /__sandbox/scan did not answer a list of hits; is the sandbox a version with /__sandbox/scan?`);
  return hits as Hit[];
}
