import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { type Hit, scanFile, UNVERIFIED_JWT, UnreadableFile } from "../log-file-scan.js";
import { baseUrl, CliTrouble, controlRequest, EXIT_FINDINGS, EXIT_TROUBLE, troubleLine } from "./report.js";

/**
 * `merchant-sandbox scan-logs --url URL FILE…`: looks for the sandbox's secrets in clear in log
 * files (a merchant's api_secret, payment token or password, or a JWT the sandbox signed), with
 * POST /__sandbox/scan. One line per hit, `file:line:column: <kind> of merchant <id> in clear text`,
 * never the secret. The sandbox remembers the secrets and keys of sessions that ended, but nothing
 * from before it restarted: a JWT-shaped string none of its keys verifies is a warning line
 * (`file:line:column: warning: …`), an error with --strict. Files are streamed and sent in chunks
 * (../log-file-scan.ts); only regular files are read, at most --max-bytes of each. Exit 1 on any
 * hit (or, with --strict, any unverified JWT), 0 when clean, 2 when a file cannot be read (or not
 * whole) or the sandbox cannot be reached.
 */

interface ScanLogsArgs {
  url: string;
  files: string[];
  adminToken?: string;
  maxBytes: number;
  strict: boolean;
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
      .option("strict", {
        type: "boolean",
        default: false,
        describe:
          "A JWT-shaped string no key of this sandbox verifies (signed before it restarted, or by another issuer) is an error (exit 1), not a warning",
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
      return troubleLine("scan-logs", e);
    }
    let hits = 0;
    let unverified = 0;
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
            if (hit.kind === UNVERIFIED_JWT) {
              unverified++;
              if (args.strict) filesWithHits.add(file);
              process.stdout.write(`${file}:${hit.line}:${hit.column}: ${args.strict ? "error" : "warning"}: ${UNVERIFIED_TEXT}\n`);
              return;
            }
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
        return troubleLine("scan-logs", e);
      }
    }
    const files = args.files.length - unreadable;
    const failing = hits + (args.strict ? unverified : 0);
    // A file that could not be read was not scanned: saying "no secret in clear text" would pass a
    // CI gate on logs nobody looked at. Its error line above is the whole answer (exit 2).
    if (unreadable > 0 && failing === 0) {
      process.exitCode = EXIT_TROUBLE;
      return;
    }
    const scanned = `${files} file${files === 1 ? "" : "s"} (${lines} line${lines === 1 ? "" : "s"})`;
    const summary =
      hits > 0
        ? `${hits} secret${hits === 1 ? "" : "s"} in clear text in ${filesWithHits.size} of ${scanned}. Redact them before they are logged.`
        : unverified > 0 && args.strict
          ? `no secret of this sandbox in clear text, but a JWT it cannot verify in ${filesWithHits.size} of ${scanned}.`
          : `no secret in clear text in ${scanned}.`;
    process.stderr.write(`merchant-sandbox: ${summary}${unverified > 0 ? unverifiedSummary(unverified) : ""}\n`);
    process.exitCode = unreadable > 0 ? EXIT_TROUBLE : failing > 0 ? EXIT_FINDINGS : 0;
  },
};

/** One line's words for a JWT no key of the sandbox verifies: what it may be, and what to do. */
const UNVERIFIED_TEXT =
  "a JWT no key of this sandbox verifies (signed before the sandbox restarted, or by another issuer); check that this line logs no token in clear";

function unverifiedSummary(n: number): string {
  return ` ${n} JWT${n === 1 ? "" : "s"} no key of this sandbox verifies: it knows no key from before its last start, so scan logs before it stops to know whose they are.`;
}

function hitsOf(body: unknown): Hit[] {
  const answer = body as { hits?: unknown; unverified?: unknown } | null;
  const hits = answer?.hits;
  if (!Array.isArray(hits))
    throw new CliTrouble(`POST /__sandbox/scan did not answer a list of hits; is the sandbox a version with /__sandbox/scan?`);
  // A sandbox from before `unverified` answers none.
  const unverified = Array.isArray(answer?.unverified) ? (answer.unverified as Array<{ line: number; column: number; length: number }>) : [];
  const all = [
    ...(hits as Hit[]),
    ...unverified.map((u) => ({ line: u.line, column: u.column, length: u.length, kind: UNVERIFIED_JWT, merchant: "" })),
  ];
  return all.sort((a, b) => a.line - b.line || a.column - b.column);
}
