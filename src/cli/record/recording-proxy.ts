import { renameSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readBody } from "../../adapters/node-request.js";
import { VERSION } from "../../core/version.js";
import { type Exchange, type HeaderMap, harEntry } from "./har-entry.js";

/**
 * `merchant-sandbox record`: a plain-HTTP proxy in front of the provider's test environment that
 * the integration's own test run goes through once; every exchange is forwarded (HTTPS upstream
 * too) and written to a HAR 1.2 file, which `calibrate --from-har` learns from. Secrets are written
 * as pseudonyms unless asked (har-secrets.ts). The file is rewritten whole after each exchange, so
 * a run killed midway leaves a readable recording.
 */

export interface RecordOptions {
  upstream: string;
  host: string;
  port: number;
  out: string;
  keepSecrets: boolean;
  /** Exchanges recorded at most; past it the proxy still forwards and records no more. */
  maxEntries: number;
  /** The most bytes of one request or answer body read. */
  maxBodyBytes: number;
  log: (line: string) => void;
}

/** Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), and those the proxy recomputes. */
const NOT_FORWARDED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "host",
  "content-length",
]);

/** How long the provider has to answer one request before the client gets a 502. */
const UPSTREAM_TIMEOUT_MS = 30_000;

export interface RunningRecorder {
  url: string;
  server: Server;
  entries(): number;
  close(): Promise<void>;
}

export async function startRecorder(o: RecordOptions): Promise<RunningRecorder> {
  const upstream = o.upstream.replace(/\/+$/, "");
  const entries: unknown[] = [];
  let full = false;
  const write = () => {
    const har = { log: { version: "1.2", creator: { name: "merchant-sandbox record", version: VERSION }, entries } };
    writeFileSync(`${o.out}.tmp`, `${JSON.stringify(har, null, 1)}\n`);
    renameSync(`${o.out}.tmp`, o.out);
  };
  write();
  const record = (x: Exchange) => {
    if (entries.length >= o.maxEntries) {
      if (!full) o.log(`merchant-sandbox record: ${o.maxEntries} exchanges recorded (--max-entries); forwarding on, recording no more.`);
      full = true;
      return;
    }
    entries.push(harEntry(x, o.keepSecrets, Date.now()));
    write();
  };
  const server = createServer((req, res) => {
    void forward(upstream, req, res, o.maxBodyBytes).then(record, (e: unknown) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
      res.end(`merchant-sandbox record: forwarding to ${upstream} failed: ${(e as Error).message}; nothing was recorded for it.\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${o.host}:${port}`,
    server,
    entries: () => entries.length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One request forwarded to the provider and its answer to the client, as it went. */
async function forward(upstream: string, req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Exchange> {
  const startedAt = Date.now();
  const body = await requestBody(req, maxBytes);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const url = upstream + (req.url ?? "/");
  const method = req.method ?? "GET";
  const answer = await fetch(url, {
    method,
    headers,
    redirect: "manual",
    signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
    ...(body.length > 0 && method !== "GET" && method !== "HEAD" && { body: new Uint8Array(body) }),
  });
  // fetch has undone any Content-Encoding: the client gets the bytes as they are, their length recomputed.
  const answered = await answerBody(answer, maxBytes);
  const out: HeaderMap = {};
  answer.headers.forEach((value, name) => {
    if (!NOT_FORWARDED.has(name) && name !== "content-encoding" && name !== "set-cookie") out[name] = value;
  });
  const cookies = answer.headers.getSetCookie();
  if (cookies.length > 0) out["set-cookie"] = cookies;
  res.writeHead(answer.status, out);
  res.end(answered);
  return { startedAt, method, url, requestHeaders: headers, requestBody: body, status: answer.status, answerHeaders: out, answerBody: answered };
}

/** A request's body, refused past `max` bytes (the proxy answers 502 saying so): the server's own reader. */
async function requestBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const read = await readBody(req, max + 1);
  if (read === undefined) throw new Error("the request did not arrive whole");
  if (read.truncated) throw new Error(`the request body is over ${max} bytes`);
  return Buffer.from(read.body);
}

/**
 * The provider's answer as fetch decodes it, read chunk by chunk and dropped past `max` bytes: an
 * answer that never ends costs the proxy at most the limit.
 */
async function answerBody(answer: Response, max: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = answer.body?.getReader();
  for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
    size += part.value.length;
    if (size > max) {
      await reader!.cancel().catch(() => {});
      throw new Error(`its answer is over ${max} bytes`);
    }
    chunks.push(part.value);
  }
  return Buffer.concat(chunks, size);
}
