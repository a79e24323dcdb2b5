import { constants } from "node:fs";
import { type FileHandle, lstat, open, realpath } from "node:fs/promises";

/**
 * One log file, streamed and cut into the texts `scan-logs` sends to POST /__sandbox/scan: whole
 * lines batched under the request budget, and a line too long for one request in pieces, cut as it
 * is read (never held whole), each piece overlapping the one before so that a secret across a cut
 * is whole in one of them. Only a regular file is read (a FIFO, a device or a socket may never end
 * or block for ever), and at most `maxBytes` of it: past that is an error, never a silent pass.
 */

export interface Hit {
  line: number;
  column: number;
  kind: string;
  merchant: string;
}

/** The JSON-encoded text of one request stays within this (the body adds `{"text":""}`). */
export const CHUNK_BUDGET_BYTES = 60 * 1024;
/**
 * How much of a piece the next one repeats: up to this many characters, and at most half the budget
 * once JSON-encoded, so every piece moves on by at least half. Any secret or token of up to 5,120
 * characters (8,192 of plain ASCII, as every api_secret, payment token and JWT is) that crosses a
 * cut is whole in the next piece.
 */
export const OVERLAP_CHARS = 8192;
const OVERLAP_BUDGET_BYTES = CHUNK_BUDGET_BYTES / 2;

/** The file cannot be scanned, or not whole: the message is the rest of the line after `file: `. */
export class UnreadableFile extends Error {}

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
export async function scanFile(file: string, maxBytes: number, scan: (text: string) => Promise<Hit[]>, report: (hit: Hit) => void): Promise<number> {
  // Only the hits of the previous request can be found again (in the overlap of two pieces).
  let seen = new Set<string>();
  const send = async (chunk: Chunk) => {
    const found = await scan(chunk.text);
    const now = new Set<string>();
    for (const h of found) {
      const hit = { ...h, line: chunk.firstLine + h.line - 1, column: h.column + (h.line === 1 ? chunk.columnOffset : 0) };
      const key = `${hit.line}:${hit.column}:${hit.kind}:${hit.merchant}`;
      now.add(key);
      if (!seen.has(key)) report(hit);
    }
    seen = now;
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

  let lineNo = 1;
  /** What of line `lineNo` is not sent yet, with the overlap of the last piece sent. */
  let current = "";
  /** Characters of the line before `current`. */
  let offset = 0;
  let inPieces = false;

  const sendPieces = async () => {
    for (let cut = fitting(current, CHUNK_BUDGET_BYTES); cut < current.length; cut = fitting(current, CHUNK_BUDGET_BYTES)) {
      if (isHigh(current.charCodeAt(cut - 1))) cut--; // a surrogate pair stays in one piece
      await flush();
      await send({ text: current.slice(0, cut), firstLine: lineNo, columnOffset: offset });
      inPieces = true;
      const keep = overlapStart(current, cut);
      offset += characters(current, keep);
      current = current.slice(keep);
    }
  };
  const endLine = async () => {
    const text = current.endsWith("\r") ? current.slice(0, -1) : current;
    if (inPieces) {
      await flush();
      await send({ text, firstLine: lineNo, columnOffset: offset });
    } else {
      const cost = jsonBytes(text) + 2; // and its "\n"
      if (pendingBytes + cost > CHUNK_BUDGET_BYTES) await flush();
      if (pending.length === 0) pendingFirst = lineNo;
      pending.push(text);
      pendingBytes += cost;
    }
  };

  const handle = await openRegularFile(file, maxBytes);
  // `end` is inclusive: one byte past the limit is read, to tell a file that grew past it.
  const stream = handle.createReadStream({ encoding: "utf8", highWaterMark: 64 * 1024, end: maxBytes });
  try {
    for await (const data of stream as AsyncIterable<string>) {
      if (stream.bytesRead > maxBytes)
        throw new UnreadableFile(
          `it grew past --max-bytes (${maxBytes}) while it was read; the rest was not scanned. Scan a copy that no longer grows, or raise --max-bytes`,
        );
      for (let from = 0; ; ) {
        const nl = data.indexOf("\n", from);
        current += nl < 0 ? data.slice(from) : data.slice(from, nl);
        await sendPieces();
        if (nl < 0) break;
        await endLine();
        lineNo++;
        current = "";
        offset = 0;
        inPieces = false;
        from = nl + 1;
      }
    }
  } catch (e) {
    if (e instanceof UnreadableFile || !(e as NodeJS.ErrnoException).code) throw e;
    throw new UnreadableFile(cannotRead(e));
  } finally {
    stream.destroy();
    await handle.close().catch(() => undefined);
  }
  // A last line without its "\n" is still a line.
  const last = current !== "" || inPieces;
  if (last) await endLine();
  await flush();
  return last ? lineNo : lineNo - 1;
}

/**
 * The file opened, if it is a regular file within the limit. Opened without blocking (a FIFO
 * with no writer would block the open itself), then looked at through the open descriptor.
 */
async function openRegularFile(file: string, maxBytes: number): Promise<FileHandle> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new UnreadableFile(cannotRead({ code: "EISDIR" }));
    if (!stat.isFile()) {
      const kind = stat.isFIFO()
        ? "named pipe (FIFO)"
        : stat.isCharacterDevice()
          ? "character device"
          : stat.isBlockDevice()
            ? "block device"
            : "socket";
      const link = (await lstat(file)).isSymbolicLink() ? ` (a link to ${await realpath(file)})` : "";
      throw new UnreadableFile(
        `not a regular file but a ${kind}${link}; scan-logs reads only regular files, which end: write the log to a file and give its path`,
      );
    }
    if (stat.size > maxBytes)
      throw new UnreadableFile(
        `it is ${stat.size} bytes, over --max-bytes (${maxBytes}); nothing of it was scanned. Raise --max-bytes to scan it whole`,
      );
    return handle;
  } catch (e) {
    await handle?.close();
    throw e instanceof UnreadableFile ? e : new UnreadableFile(cannotRead(e));
  }
}

function cannotRead(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const why =
    err.code === "ENOENT"
      ? "no such file"
      : err.code === "EACCES" || err.code === "EPERM"
        ? "permission denied"
        : err.code === "EISDIR"
          ? "it is a directory"
          : (err.code ?? err.message);
  return `cannot read it (${why}); give the path of a readable log file`;
}

/** The bytes a string takes inside a JSON string literal. */
function jsonBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s)) - 2;
}

/** At most what one code unit costs inside a JSON string (a lone surrogate is escaped, `\udxxx`). */
function unitCost(c: number): number {
  if (c < 0x20) return 6;
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) return 6;
  return 3;
}

/** How many code units from the start of `text` fit in `budget` bytes of JSON: stops at the budget. */
function fitting(text: string, budget: number): number {
  let cost = 0;
  for (let i = 0; i < text.length; i++) {
    cost += unitCost(text.charCodeAt(i));
    if (cost > budget) return i;
  }
  return text.length;
}

/** Where the next piece starts: at most OVERLAP_CHARS before the cut and half the budget, off a surrogate pair. */
function overlapStart(text: string, cut: number): number {
  let cost = 0;
  let at = cut;
  while (at > 0 && cut - at < OVERLAP_CHARS) {
    cost += unitCost(text.charCodeAt(at - 1));
    if (cost > OVERLAP_BUDGET_BYTES) break;
    at--;
  }
  if (at > 0 && at < cut && isLow(text.charCodeAt(at)) && isHigh(text.charCodeAt(at - 1))) at++;
  return at;
}

/** Characters (code points, as the sandbox counts columns) in the first `end` code units. */
function characters(text: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (!(isLow(text.charCodeAt(i)) && i > 0 && isHigh(text.charCodeAt(i - 1)))) n++;
  return n;
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
