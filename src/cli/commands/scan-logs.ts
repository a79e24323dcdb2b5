import { open } from "node:fs/promises";
import type { ArgumentsCamelCase, Argv, CommandModule } from "yargs";
import { baseUrl, CliTrouble, controlRequest, EXIT_FINDINGS, EXIT_TROUBLE } from "./report.js";

/**
 * `merchant-sandbox scan-logs --url URL FILE…`: looks for the sandbox's secrets in clear in log
 * files (a merchant's api_secret, payment token or password, or a JWT the sandbox signed), with
 * POST /__sandbox/scan. One line per hit, `file:line:column: <kind> of merchant <id> in clear text`,
 * never the secret. Files are streamed and sent in chunks of whole lines, each request under the
 * sandbox's 64 KiB body limit; a line too long for one request is sent in overlapping pieces.
 * Exit 1 on any hit, 0 when clean, 2 when a file cannot be read or the sandbox cannot be reached.
 */

interface ScanLogsArgs {
  url: string;
  files: string[];
  adminToken?: string;
}

interface Hit {
  line: number;
  column: number;
  kind: string;
  merchant: string;
}

/** The JSON-encoded text of one request stays within this (the body adds `{"text":""}`). */
export const CHUNK_BUDGET_BYTES = 60 * 1024;
/**
 * A line over the budget is sent in pieces of this many characters (a character is at most 6 bytes
 * in JSON, `\u001f`), each overlapping the previous one so a secret across a cut is still whole in one.
 */
const PIECE_CHARS = Math.floor(CHUNK_BUDGET_BYTES / 6);
const PIECE_OVERLAP_CHARS = 2048;

export const scanLogsCommand: CommandModule<object, ScanLogsArgs> = {
  command: "scan-logs <files..>",
  describe: "Find the sandbox's secrets and tokens in clear in log files; exit 1 on any",
  builder: (y: Argv) =>
    y
      .positional("files", { type: "string", array: true, demandOption: true, describe: "Log files to scan" })
      .option("url", { type: "string", demandOption: true, describe: "The sandbox's base URL, e.g. http://localhost:4010" })
      .option("admin-token", { type: "string", describe: "The sandbox's --admin-token, if it was started with one" })
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
          process.stderr.write(`merchant-sandbox: ${file}: cannot read it (${e.message}); give the path of a readable log file\n`);
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

class UnreadableFile extends Error {}

function hitsOf(body: unknown): Hit[] {
  const hits = (body as { hits?: unknown } | null)?.hits;
  if (!Array.isArray(hits))
    throw new CliTrouble(`POST /__sandbox/scan did not answer a list of hits; is the sandbox a version with /__sandbox/scan?`);
  return hits as Hit[];
}

/** What is sent in one request: text whose first line is `firstLine` of the file, shifted `columnOffset` characters. */
interface Chunk {
  text: string;
  firstLine: number;
  columnOffset: number;
}

/**
 * Streams one file, sends it in chunks, and reports each hit once with its position in the file.
 * Resolves with the number of lines.
 */
export async function scanFile(file: string, scan: (text: string) => Promise<Hit[]>, report: (hit: Hit) => void): Promise<number> {
  const seen = new Set<string>();
  const send = async (chunk: Chunk) => {
    const found = await scan(chunk.text);
    for (const h of found) {
      const hit = { ...h, line: chunk.firstLine + h.line - 1, column: h.column + (h.line === 1 ? chunk.columnOffset : 0) };
      const key = `${hit.line}:${hit.column}:${hit.kind}:${hit.merchant}`;
      if (seen.has(key)) continue; // found again in the overlap of two pieces of a long line
      seen.add(key);
      report(hit);
    }
  };

  let pending: string[] = [];
  let pendingBytes = 0;
  let pendingFirst = 1;
  const flush = async () => {
    if (pending.length === 0) return;
    await send({ text: pending.join("\n"), firstLine: pendingFirst, columnOffset: 0 });
    pending = [];
    pendingBytes = 0;
  };

  let lineNo = 0;
  for await (const line of readLines(file)) {
    lineNo++;
    const cost = jsonBytes(line) + 2; // and its "\n"
    if (cost > CHUNK_BUDGET_BYTES) {
      await flush();
      for (const piece of pieces(line)) await send({ text: piece.text, firstLine: lineNo, columnOffset: piece.offset });
      continue;
    }
    if (pendingBytes + cost > CHUNK_BUDGET_BYTES) await flush();
    if (pending.length === 0) pendingFirst = lineNo;
    pending.push(line);
    pendingBytes += cost;
  }
  await flush();
  return lineNo;
}

/** The bytes a string takes inside a JSON string literal. */
function jsonBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s)) - 2;
}

/** Overlapping pieces of a long line, with their offsets in characters (code points, as the sandbox counts columns). */
function* pieces(line: string): Generator<{ text: string; offset: number }> {
  const chars = Array.from(line);
  const step = PIECE_CHARS - PIECE_OVERLAP_CHARS;
  for (let start = 0; ; start += step) {
    yield { text: chars.slice(start, start + PIECE_CHARS).join(""), offset: start };
    if (start + PIECE_CHARS >= chars.length) return;
  }
}

/** The lines of a file without their "\n" or "\r\n", streamed; read errors become UnreadableFile. */
async function* readLines(file: string): AsyncGenerator<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, "r");
    if ((await handle.stat()).isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
  } catch (e) {
    await handle?.close();
    throw new UnreadableFile(describe(e));
  }
  const stream = handle.createReadStream({ encoding: "utf8", highWaterMark: 256 * 1024 });
  let rest = "";
  try {
    for await (const data of stream as AsyncIterable<string>) {
      const parts = (rest + data).split("\n");
      rest = parts.pop()!;
      for (const part of parts) yield part.endsWith("\r") ? part.slice(0, -1) : part;
    }
  } catch (e) {
    throw new UnreadableFile(describe(e));
  } finally {
    stream.destroy();
    await handle.close().catch(() => undefined);
  }
  if (rest !== "") yield rest.endsWith("\r") ? rest.slice(0, -1) : rest;
}

function describe(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err.code) {
    case "ENOENT":
      return "no such file";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a directory";
    default:
      return err.code ?? err.message;
  }
}
