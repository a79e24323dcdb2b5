import type { IncomingMessage, ServerResponse } from "node:http";
import { internalsOf } from "../app/internals.js";
import type { Sandbox } from "../app/sandbox.js";
import { isSandboxPath } from "../app/sandbox-paths.js";
import type { SandboxRequest } from "../core/http-types.js";
import { problemResponse } from "../core/problem.js";
import { redactUrl } from "../core/redact.js";
import { hostMissing } from "./http-refusals.js";
import { SERVER_LIMIT_DEFAULTS } from "./node-http.js";
import { distinctHeaders, hasNoBody, NO_BODY, pathOf, readBody, sandboxRequestOf } from "./node-request.js";
import { stream, write } from "./node-response.js";
import { sessionMount } from "./session-mount.js";
import { WriteStallGuard } from "./write-stall.js";

/**
 * The sandbox as express middleware, mounted under a prefix of the app
 * (`app.use("/merchant", sandboxMiddleware(sandbox))`) or at its root. The same translation of
 * node's request and response as the standalone server (`node-http.ts`), so the answers are its
 * answers byte for byte: the body is read only up to the sandbox's limit (a larger one is refused
 * 413 without being read, and the connection closed), an event stream the client leaves frees its
 * place, and the Host is a header like any other (no URL is built from it: a Host the control
 * plane does not answer to gets its problem+json, never an exception).
 */
export interface SandboxMiddlewareOptions {
  /** A session id (`sandbox.sessions.create()`): every request the middleware answers is that session's. */
  session?: string;
  /**
   * true (default): a path the sandbox does not serve (not a merchant API route, the control plane
   * or a session's base URL) goes on to the app's next handler, so the app's own routes work. false:
   * every request that reaches the middleware is the sandbox's, and an unknown path gets its 404
   * with the path most likely meant (mount it under a prefix of its own then).
   */
  fallthrough?: boolean;
}

/**
 * The shape of express middleware, written without express's types so an app on express 4 or 5
 * mounts it as it is, and the types need no @types/express to load. It reads only node's own
 * `req` and `res`.
 */
export type SandboxMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

export function sandboxMiddleware(sandbox: Sandbox, options: SandboxMiddlewareOptions = {}): SandboxMiddleware {
  const mounted = sessionMount(options.session);
  const fallthrough = options.fallthrough ?? true;
  // The event streams this middleware has open; each leaves the set when its response closes.
  const openStreams = new Set<() => void>();
  // A client that never reads its event stream is cut off as the standalone server cuts it.
  const stalls = new WriteStallGuard(SERVER_LIMIT_DEFAULTS.writeTimeoutMs, SERVER_LIMIT_DEFAULTS.writeBudgetBytes);
  return (req, res, next) => {
    // Under app.use("/merchant", …) express has already cut the prefix from req.url.
    if (fallthrough && !isSandboxPath(pathOf(req))) {
      next();
      return;
    }
    translate(sandbox, req, res, mounted, openStreams, stalls).catch(next);
  };
}

async function translate(
  sandbox: Sandbox,
  req: IncomingMessage,
  res: ServerResponse,
  mounted: (path: string) => string,
  openStreams: Set<() => void>,
  stalls: WriteStallGuard,
): Promise<void> {
  const headers = distinctHeaders(req);
  if (req.httpVersion === "1.1" && headers.host === undefined) {
    const secrets = internalsOf(sandbox).merchants.secrets.view();
    write(res, problemResponse(hostMissing(), redactUrl(pathOf(req), "", secrets).path, secrets), true);
    return;
  }
  let body: Uint8Array = NO_BODY;
  let truncated = false;
  let secretsAtArrival: SandboxRequest["secretsAtArrival"];
  if (!hasNoBody(req.method, headers)) {
    secretsAtArrival = internalsOf(sandbox).merchants.secrets.view();
    const parsed = bodyParsedBefore(req);
    if (parsed) body = parsed;
    else {
      // At most one byte past the limit: enough for the sandbox to refuse it 413, and no more held.
      const read = await readBody(req, sandbox.settings.maxBodyBytes + 1);
      // The client went away before its body arrived: nothing to answer, nothing to act on.
      if (!read) return;
      ({ body, truncated } = read);
    }
  }
  const request = sandboxRequestOf(req, headers, body, secretsAtArrival);
  request.path = mounted(request.path);
  const response = await sandbox.handle(request);
  if (response.dropConnection) req.socket.destroy();
  else if (response.stream) stream(res, response, openStreams, stalls);
  // A body cut at the limit was not read to its end: close the connection rather than drain it.
  else write(res, response, truncated);
}

/**
 * The body when a body parser (express.json() …) mounted before the middleware has read it
 * already: the stream then holds nothing more, so the parsed value is written back as bytes
 * (JSON for an object). Undefined while the stream is still unread.
 */
function bodyParsedBefore(req: IncomingMessage): Uint8Array | undefined {
  if (!req.readableEnded) return undefined;
  const parsed = (req as { body?: unknown }).body;
  if (parsed === undefined) return NO_BODY;
  if (parsed instanceof Uint8Array) return parsed;
  return Buffer.from(typeof parsed === "string" ? parsed : JSON.stringify(parsed));
}
