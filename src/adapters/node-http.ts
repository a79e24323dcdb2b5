import { internalsOf } from "../app/internals.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { SandboxRequest } from "../core/http-types.js";
import type { Sandbox } from "../app/sandbox.js";
import { problemResponse } from "../core/problem.js";
import { redactUrl } from "../core/redact.js";
import { endSocketWith, expectationUnsupported, hostMissing, refusalOfParserError, tooManyHeaders } from "./http-refusals.js";
import { distinctHeaders, hasNoBody, NO_BODY, pathOf, readBody, sandboxRequestOf } from "./node-request.js";
import { answerInternalError, stream, write } from "./node-response.js";
import { WriteStallGuard } from "./write-stall.js";

/**
 * The standalone server: bare `node:http` in front of `sandbox.handle`. A thin translation and
 * nothing else: no rule of the auth model lives here. (msw's fetch pipeline, a fetch Request and
 * Response per call, is kept for in-process use: docs/architecture.md#defaults-and-published-values.)
 * The translation's functions (headers, the bounded body read: node-request.ts; writing an answer
 * or a stream: node-response.ts) are shared with the express middleware, which must answer as this
 * server does.
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
  /** The most header fields accepted; more gets 431. Default 100, Apache httpd's LimitRequestFields. */
  maxHeaders?: number;
  /**
   * How long a connection's writes may wait for its client to read before the connection is
   * destroyed (ms), once a buffer's worth waits: a client that never reads frees what it holds.
   */
  writeTimeoutMs?: number;
  /** The most bytes all such connections may hold together; past it the longest waiting are destroyed. */
  writeBudgetBytes?: number;
}

/** The server's limits when not configured: safe for a sandbox on a CI runner or a laptop. */
export const SERVER_LIMIT_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxHeaderBytes: 16 * 1024,
  maxHeaders: 100,
  writeTimeoutMs: 5_000,
  writeBudgetBytes: 64 * 1024 * 1024,
} as const;

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  readonly host: string;
  /** e.g. http://127.0.0.1:4010 */
  readonly url: string;
  /** Requests received and not yet answered (a shutdown reports what it waits for). */
  readonly inFlight: number;
  /**
   * Stops accepting connections at once, closes idle keep-alive connections, lets in-flight
   * requests finish (each answer says Connection: close), and after `graceMs` cuts whatever is
   * left. Resolves when every connection is closed, with what the drain did.
   */
  close(graceMs?: number): Promise<DrainOutcome>;
}

/** What a close() did: requests answered while draining, and requests cut when the grace ran out. */
export interface DrainOutcome {
  answered: number;
  cut: number;
}

export async function startServer(sandbox: Sandbox, options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const maxBody = sandbox.settings.maxBodyBytes;
  const maxHeaderBytes = options.maxHeaderBytes ?? SERVER_LIMIT_DEFAULTS.maxHeaderBytes;
  const maxHeaders = options.maxHeaders ?? SERVER_LIMIT_DEFAULTS.maxHeaders;
  if (!Number.isInteger(maxHeaders) || maxHeaders < 1) throw new RangeError(`maxHeaders must be a whole number of at least 1, got ${maxHeaders}`);
  const stalls = new WriteStallGuard(
    options.writeTimeoutMs ?? SERVER_LIMIT_DEFAULTS.writeTimeoutMs,
    options.writeBudgetBytes ?? SERVER_LIMIT_DEFAULTS.writeBudgetBytes,
  );
  let stopping = false;
  // Event streams never finish on their own: close() ends them, or the drain would wait its grace out.
  const openStreams = new Set<() => void>();
  // Counted so a shutdown can say what it waits for and what it had to cut.
  let inFlight = 0;
  const drain = { answered: 0, cut: 0, cutting: false };
  // One function for every request (a response emits 'close' once): nothing is made per request.
  const finished = () => {
    inFlight--;
    if (stopping && !drain.cutting) drain.answered++;
  };
  const track = (done: Promise<unknown> | ServerResponse) => {
    inFlight++;
    if (done instanceof Promise) void done.finally(finished);
    else done.on("close", finished);
  };
  const server = createServer(
    // Node checks request and header timeouts every connectionsCheckingInterval (30 s by default),
    // which would let a slow client hold a socket 30 s past its limit.
    // requireHostHeader: node's own refusal is an empty 400; serve() answers a problem instead.
    { maxHeaderSize: maxHeaderBytes, connectionsCheckingInterval: 1_000, requireHostHeader: false },
    (req, res) => {
      track(res);
      void serve(req, res);
    },
  );
  server.headersTimeout = options.headersTimeoutMs ?? SERVER_LIMIT_DEFAULTS.headersTimeoutMs;
  server.requestTimeout = options.requestTimeoutMs ?? SERVER_LIMIT_DEFAULTS.requestTimeoutMs;
  server.keepAliveTimeout = 5_000;
  // Node keeps the first maxHeadersCount fields and drops the rest silently (2000 by default): one
  // more than the limit lets serve() see that there were too many and refuse, rather than miss a
  // repeated Authorization among the dropped ones.
  server.maxHeadersCount = maxHeaders + 1;

  // A refusal of the HTTP layer echoes the path as redacted as the core's answers do, and what it
  // quotes of the request (an Expect value) is redacted by the mapper against the same secrets.
  const shownPath = (req: IncomingMessage) => redactUrl(pathOf(req), "", internalsOf(sandbox).merchants.secrets.view()).path;
  const refusal = (thrown: unknown, path: string) => problemResponse(thrown, path, internalsOf(sandbox).merchants.secrets.view());

  // handle() never throws; the catch only guards the translation itself.
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await translate(req, res);
    } catch {
      answerInternalError(res);
    }
  }

  async function translate(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Read from the request's own headers object, built here once: node's `req.headers` is a second
    // object, made on first read, that the sandbox would build for two or three lookups per request.
    const headers = distinctHeaders(req);
    if (req.httpVersion === "1.1" && headers.host === undefined) {
      write(res, refusal(hostMissing(), shownPath(req)), true);
      return;
    }
    if (req.rawHeaders.length / 2 > maxHeaders) {
      write(res, refusal(tooManyHeaders(maxHeaders), shownPath(req)), true);
      return;
    }
    // A GET or HEAD without a body (most of them) is not waited for at all.
    if (hasNoBody(req.method, headers)) return answer(req, res, sandboxRequestOf(req, headers, NO_BODY), false);
    // The secrets as they are now, before the body is waited for (see SandboxRequest).
    const secretsAtArrival = internalsOf(sandbox).merchants.secrets.view();
    const read = await readBody(req, maxBody + 1);
    // A request that never arrived whole (the client went away, or its framing broke and the
    // parser answered 400) is not handled: the sandbox acts only on requests it can answer.
    if (!read) return;
    return answer(req, res, sandboxRequestOf(req, headers, read.body, secretsAtArrival), read.truncated);
  }

  async function answer(req: IncomingMessage, res: ServerResponse, request: SandboxRequest, truncated: boolean): Promise<void> {
    const response = await sandbox.handle(request);
    // A pipelined request on a connection whose client has not read the last answer: queued, this
    // answer would wait in memory beside it, one more per request sent.
    if (response.dropConnection || stalls.isStalled(req.socket)) {
      response.stream?.cancel();
      req.socket.destroy();
      return;
    }
    if (response.stream) {
      stream(res, response, openStreams, stalls);
      return;
    }
    // An over-long body was not read to its end: close the connection rather than drain it. While
    // stopping, every answer says Connection: close, so keep-alive clients stop sending here.
    write(res, response, truncated || stopping);
    stalls.wrote(res.socket);
  }

  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    endSocketWith(socket, refusal(refusalOfParserError(err.code, maxHeaderBytes), "/"));
  });
  // Without these listeners node answers an empty 417, or closes a CONNECT without a word.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    write(res, refusal(expectationUnsupported(req.headers.expect), shownPath(req)), true);
  });
  // CONNECT is a request like any other to the sandbox (every endpoint refuses it with 405 and
  // says which methods it takes); node hands it over as a bare socket.
  server.on("connect", (req: IncomingMessage, socket: Socket) => {
    socket.on("error", () => socket.destroy());
    if (req.rawHeaders.length / 2 > maxHeaders) {
      endSocketWith(socket, refusal(tooManyHeaders(maxHeaders), shownPath(req)));
      return;
    }
    track(
      sandbox
        .handle(sandboxRequestOf(req, distinctHeaders(req), NO_BODY))
        .then((response) => (response.dropConnection ? socket.destroy() : endSocketWith(socket, response)))
        .catch(() => socket.destroy()),
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
    get inFlight() {
      return inFlight;
    },
    close: async (graceMs = 1000) => {
      stopping = true;
      for (const end of [...openStreams]) end();
      // Requests still open when the grace runs out are the ones cut (read before the cut closes them).
      await closeGracefully(server, graceMs, () => {
        drain.cutting = true;
        drain.cut = inFlight;
      });
      return { answered: drain.answered, cut: drain.cut };
    },
  };
}

function closeGracefully(server: Server, graceMs: number, beforeCut: () => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      beforeCut();
      server.closeAllConnections();
    }, graceMs);
    // Unref'd: the timer alone must not keep a library user's process alive.
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
