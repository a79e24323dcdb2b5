import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { SandboxRequest, SandboxResponse } from "../core/http-types.js";
import type { Sandbox } from "../core/sandbox.js";
import { problemResponse, statusTitle } from "../core/problem.js";
import { HeadersTooLarge, InvalidRequest, RequestTimeout, type SandboxError } from "../core/errors.js";

/**
 * The standalone server: bare `node:http` in front of `sandbox.handle`. A thin translation and
 * nothing else: no rule of the auth model lives here. (msw's fetch pipeline is kept for
 * in-process use; as a server it costs ~8x the CPU per request, see DESIGN.md.)
 */

export interface ServerOptions {
  /** 0 picks a free port (tests). Default 4010. */
  port?: number;
  /** Default 127.0.0.1; the image binds 0.0.0.0. */
  host?: string;
  /** How long a client may take to send its headers, and the whole request (ms). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** The largest header section accepted (bytes); larger gets 431. Default 16 KB, node's own. */
  maxHeaderBytes?: number;
}

/** The server's limits when not configured: safe for a sandbox on a CI runner or a laptop. */
export const SERVER_LIMIT_DEFAULTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxHeaderBytes: 16 * 1024 } as const;

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  readonly host: string;
  /** e.g. http://127.0.0.1:4010 */
  readonly url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish, closes idle keep-alive
   * connections, and after `graceMs` cuts whatever is left.
   */
  close(graceMs?: number): Promise<void>;
}

export async function startServer(sandbox: Sandbox, options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const maxBody = sandbox.settings.maxBodyBytes;
  // handle() never throws; the catch only guards the translation itself from taking the process down.
  const maxHeaderBytes = options.maxHeaderBytes ?? SERVER_LIMIT_DEFAULTS.maxHeaderBytes;
  let stopping = false;
  const server = createServer(
    // Node checks request and header timeouts every connectionsCheckingInterval (30 s by default),
    // which would let a slow client hold a socket 30 s past its limit.
    { maxHeaderSize: maxHeaderBytes, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      serve(req, res).catch(() => answerInternalError(res));
    },
  );
  server.headersTimeout = options.headersTimeoutMs ?? SERVER_LIMIT_DEFAULTS.headersTimeoutMs;
  server.requestTimeout = options.requestTimeoutMs ?? SERVER_LIMIT_DEFAULTS.requestTimeoutMs;
  server.keepAliveTimeout = 5_000;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { body, truncated } = await readBody(req, maxBody + 1);
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const request: SandboxRequest = {
      method: req.method ?? "GET",
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? "" : url.slice(q + 1),
      headers: distinctHeaders(req),
      body,
    };
    const response = await sandbox.handle(request);
    if (response.dropConnection) {
      req.socket.destroy();
      return;
    }
    // An over-long body was not read to its end: close the connection rather than drain it. While
    // stopping, every answer says Connection: close, so keep-alive clients stop sending here.
    write(res, response, truncated || stopping);
  }

  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const problem = problemResponse(refusalOfParserError(err.code, maxHeaderBytes), "/");
    const status = `${problem.status} ${statusTitle(problem.status)}`;
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: application/problem+json\r\ncache-control: no-store\r\ncontent-length: ${Buffer.byteLength(problem.body)}\r\nconnection: close\r\n\r\n${problem.body}`,
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 4010, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    server,
    port,
    host,
    url: `http://${shownHost === "0.0.0.0" ? "127.0.0.1" : shownHost}:${port}`,
    close: (graceMs = 1000) => {
      stopping = true;
      return closeGracefully(server, graceMs);
    },
  };
}

/**
 * The request's headers by lower-case name, a repeated header as an array of its values (the core
 * refuses, say, two Authorization headers, which node's `req.headers` would silently drop). Built
 * from rawHeaders in one pass, into an object with no prototype, so a header named `__proto__` or
 * `constructor` is just a header.
 */
/** What a request refused by node's HTTP parser (before the sandbox sees it) was refused for. */
function refusalOfParserError(code: string | undefined, maxHeaderBytes: number): SandboxError {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return new RequestTimeout("The request was not completed in time. Send the headers and body without pausing.");
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return new HeadersTooLarge(
      `The request's headers are larger than this sandbox accepts (${maxHeaderBytes} bytes in all). Send shorter headers: an access token is under 2 KB, so an oversized Authorization or Cookie header is the usual cause (the limit is serve --max-header-bytes).`,
    );
  }
  return new InvalidRequest(
    "http_malformed",
    "The request is not valid HTTP/1.1 (bad request line, header or framing). Check the client's request encoding.",
  );
}

function distinctHeaders(req: IncomingMessage): SandboxRequest["headers"] {
  const out: SandboxRequest["headers"] = Object.create(null) as SandboxRequest["headers"];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[name] = [seen, value];
  }
  return out;
}

/** Reads at most `limit` bytes; a longer body is cut there and reported as truncated. */
function readBody(req: IncomingMessage, limit: number): Promise<{ body: Uint8Array; truncated: boolean }> {
  if (req.method === "GET" || req.method === "HEAD") {
    if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined) {
      return Promise.resolve({ body: new Uint8Array(0), truncated: false });
    }
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      req.off("data", onData);
      resolve({ body: Buffer.concat(chunks, Math.min(size, limit)), truncated });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        req.pause();
        finish(true);
      }
    };
    req.on("data", onData);
    req.once("end", () => finish(false));
    // An aborted upload: answer from what came (the client will not read it anyway).
    req.once("error", () => finish(true));
    req.once("close", () => finish(size >= limit));
  });
}

function write(res: ServerResponse, response: SandboxResponse, closeAfter: boolean): void {
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
 * handle() never throws; this guards the translation itself (a header node refuses to write, say):
 * the client still gets a problem+json 500 rather than a cut connection, when nothing is sent yet.
 */
function answerInternalError(res: ServerResponse): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const problem = problemResponse(new Error("response translation failed"), "/");
  res.writeHead(problem.status, { ...problem.headers, "content-length": Buffer.byteLength(problem.body), connection: "close" });
  res.end(problem.body);
}

function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
