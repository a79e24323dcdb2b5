import { readFileSync, statSync } from "node:fs";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import type { Answer } from "./observations.js";
import { answerOf } from "./probe.js";

/**
 * A HAR 1.2 recording (http://www.softwareishard.com/blog/har-12-spec/) read into the exchanges
 * calibrate learns from, as mitmproxy's HAR export, Charles and Chromium's devtools write it:
 * response bodies as text or base64 (`content.encoding`), some still compressed as sent
 * (Content-Encoding undone here, bounded), HTTP/2 pseudo-headers, timings that may be missing.
 */

export interface HarExchange {
  method: string;
  url: URL;
  /** Lower-case names; repeated ones joined with ", ". */
  requestHeaders: Record<string, string>;
  requestBody: string | undefined;
  answer: Answer;
  /** When the request was sent (ms since 1970), from startedDateTime. */
  sentAt: number;
}

/** The recording cannot be read: the message says what is wrong and how to fix it (exit 2). */
export class HarUnusable extends Error {}

/** A HAR file past this is refused before it is read: a test run's recording is a few megabytes. */
export const MAX_HAR_BYTES = 64 * 1024 * 1024;

interface HarHeader {
  name: string;
  value: string;
}

export function readHarFile(path: string, maxAnswerBytes: number): HarExchange[] {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (e) {
    throw new HarUnusable(`Cannot read the recording ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): check --from-har.`);
  }
  if (size > MAX_HAR_BYTES)
    throw new HarUnusable(
      `The recording ${path} is ${size} bytes, over ${MAX_HAR_BYTES}: record only the integration's test run against the provider.`,
    );
  let har: unknown;
  try {
    har = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new HarUnusable(
      `The recording ${path} is not JSON (${(e as Error).message}): give a HAR file (mitmproxy's, Charles's or a browser's "Save all as HAR").`,
    );
  }
  const entries = (har as { log?: { entries?: unknown } })?.log?.entries;
  if (!Array.isArray(entries)) throw new HarUnusable(`The recording ${path} has no log.entries: it is not a HAR 1.2 file.`);
  return entries.flatMap((entry, i) => exchangeOf(entry, i, maxAnswerBytes) ?? []);
}

/** One entry as an exchange; undefined for one that is no HTTP exchange calibrate can read (a websocket, an aborted request). */
function exchangeOf(entry: unknown, index: number, maxBytes: number): HarExchange | undefined {
  const e = entry as {
    startedDateTime?: string;
    request?: { method?: string; url?: string; headers?: HarHeader[]; postData?: { text?: string } };
    response?: { status?: number; headers?: HarHeader[]; content?: { text?: string; encoding?: string } };
  };
  const status = e.response?.status;
  if (!e.request?.url || !e.request.method || typeof status !== "number" || status < 100) return undefined;
  let url: URL;
  try {
    url = new URL(e.request.url);
  } catch {
    return undefined;
  }
  const headers = headersOf(e.response?.headers);
  const body = bodyOf(e.response?.content, headers["content-encoding"], maxBytes, index);
  const sentAt = Date.parse(e.startedDateTime ?? "");
  return {
    method: e.request.method.toUpperCase(),
    url,
    requestHeaders: headersOf(e.request.headers),
    requestBody: e.request.postData?.text,
    answer: answerOf({ status, headers, body }),
    sentAt: Number.isNaN(sentAt) ? 0 : sentAt,
  };
}

function headersOf(list: HarHeader[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of Array.isArray(list) ? list : []) {
    if (typeof h?.name !== "string" || typeof h.value !== "string" || h.name.startsWith(":")) continue;
    const name = h.name.toLowerCase();
    out[name] = out[name] === undefined ? h.value : `${out[name]}, ${h.value}`;
  }
  return out;
}

/**
 * The body's bytes: base64 or text as the HAR holds them, inflated when they are still as the
 * provider compressed them (some tools keep them so), never past `maxBytes`.
 */
function bodyOf(content: { text?: string; encoding?: string } | undefined, encoding: string | undefined, maxBytes: number, index: number): Buffer {
  const text = content?.text ?? "";
  const raw = content?.encoding === "base64" ? Buffer.from(text, "base64") : Buffer.from(text, "utf8");
  const tooLarge = () =>
    new HarUnusable(
      `Entry ${index} of the recording has an answer over ${maxBytes} bytes, the limit of --max-answer-bytes: raise it if its answers really are that large.`,
    );
  if (raw.length > maxBytes) throw tooLarge();
  const inflate = INFLATERS[(encoding ?? "").trim().toLowerCase()];
  if (!inflate || !looksCompressed(raw, encoding!)) return raw;
  try {
    return inflate(raw, { maxOutputLength: maxBytes });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge();
    // Not compressed after all (the tool had decoded it and kept the header): as it is.
    return raw;
  }
}

const INFLATERS: Record<string, (b: Buffer, o: { maxOutputLength: number }) => Buffer> = {
  gzip: gunzipSync,
  "x-gzip": gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/** gzip has a magic number; deflate and brotli do not, so text that is valid UTF-8 JSON or markup is taken as already decoded. */
function looksCompressed(bytes: Buffer, encoding: string): boolean {
  if (/gzip/i.test(encoding)) return bytes[0] === 0x1f && bytes[1] === 0x8b;
  const start = bytes.subarray(0, 64).toString("utf8").trimStart();
  return !/^[[{<"]|^[\w\s.:,-]+$/.test(start);
}
