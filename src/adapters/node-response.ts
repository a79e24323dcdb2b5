import type { ServerResponse } from "node:http";
import type { SandboxResponse } from "../core/http-types.js";
import { problemResponse } from "../core/problem.js";
import { EMPTY_VIEW } from "../core/secret-index.js";
import type { WriteStallGuard } from "./write-stall.js";

/**
 * The sandbox's answer written to node's response: whole, or as a stream of events. Shared by the
 * server (node-http.ts) and the express middleware, which must answer as the server does.
 */

export function write(res: ServerResponse, response: SandboxResponse, closeAfter: boolean): void {
  if (res.destroyed) return;
  // One flat [name, value, ...] list: node writes it as it is, with no header map to build.
  const headers: string[] = [];
  for (const name in response.headers) headers.push(name, response.headers[name]!);
  headers.push("content-length", String(Buffer.byteLength(response.body)));
  if (closeAfter) headers.push("connection", "close");
  res.writeHead(response.status, headers);
  res.end(response.body);
}

/**
 * A streaming answer (Server-Sent Events): the headers without a content-length, then each chunk as
 * the sandbox writes it. The connection closes with the stream; the client leaving ends the stream.
 */
export function stream(res: ServerResponse, response: SandboxResponse, openStreams: Set<() => void>, stalls: WriteStallGuard): void {
  if (res.destroyed) {
    response.stream!.cancel();
    return;
  }
  const headers: string[] = [];
  for (const name in response.headers) headers.push(name, response.headers[name]!);
  headers.push("connection", "close");
  res.writeHead(response.status, headers);
  res.flushHeaders();
  // The chunks of one turn of the event loop go out together, as one socket write, at its end: a
  // burst of requests watched by a QA page is one write, not a chunk and a writev(2) each.
  let queued: string[] = [];
  let flushing: NodeJS.Immediate | undefined;
  // Chunks handed to the socket and not yet flushed: a client that stops reading makes this grow.
  let inSocket = 0;
  const flush = () => {
    if (flushing) clearImmediate(flushing);
    flushing = undefined;
    if (queued.length === 0 || res.writableEnded || res.destroyed) return;
    const chunks = queued;
    queued = [];
    inSocket += chunks.length;
    res.write(chunks.length === 1 ? chunks[0]! : chunks.join(""), () => {
      inSocket -= chunks.length;
    });
    stalls.wrote(res.socket);
  };
  let stop: (() => void) | undefined;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    openStreams.delete(end);
    stop?.();
    // What was written before the end (the last event, an overflow) still goes out, first.
    flush();
    if (!res.writableEnded) res.end();
  };
  stop = response.stream!.open({
    write: (chunk) => {
      if (res.writableEnded || res.destroyed) return;
      queued.push(chunk);
      flushing ??= setImmediate(flush);
    },
    // Counted in chunks, queued or in the socket, as before the batching: the hub's limit is in events.
    pending: () => queued.length + inSocket,
    end,
  });
  // The stream may have ended while opening (its replay overflowed, the sandbox closed it).
  if (ended) return;
  openStreams.add(end);
  res.once("close", end);
}

/**
 * handle() never throws; this guards the translation itself (a header node refuses to write, say):
 * the client still gets a problem+json 500 rather than a cut connection, when nothing is sent yet.
 */
export function answerInternalError(res: ServerResponse): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const problem = problemResponse(new Error("response translation failed"), "/", EMPTY_VIEW);
  res.writeHead(problem.status, { ...problem.headers, "content-length": Buffer.byteLength(problem.body), connection: "close" });
  res.end(problem.body);
}
