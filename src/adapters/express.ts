import type { IncomingMessage, ServerResponse } from "node:http";
import { createMiddleware } from "@mswjs/http-middleware";
import type { Sandbox } from "../app/sandbox.js";
import { isSandboxPath } from "../app/sandbox-paths.js";
import { SESSION_ID_PATTERN } from "../core/session-path.js";
import { createMswHandlers } from "./msw.js";

/**
 * The sandbox as express middleware, mounted under a prefix of the app
 * (`app.use("/merchant", sandboxMiddleware(sandbox))`) or at its root. Built on
 * @mswjs/http-middleware and msw (optional peer dependencies: only this entry needs them).
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
 * mounts it as it is, and the types need no @types/express to load. It needs express's `req` and
 * `res` (http-middleware reads `req.get`, `req.protocol`): mount it in an express app.
 */
export type SandboxMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

type HttpMiddlewareHandlers = Parameters<typeof createMiddleware>;
type HttpMiddlewareFunction = (req: never, res: never, next: (error?: unknown) => void) => unknown;

export function sandboxMiddleware(sandbox: Sandbox, options: SandboxMiddlewareOptions = {}): SandboxMiddleware {
  if (options.session !== undefined && !SESSION_ID_PATTERN.test(options.session)) {
    throw new TypeError(
      `session '${String(options.session).slice(0, 64)}' is not a session id: pass the id of sandbox.sessions.create(), e.g. 'ses_0123456789abcdef'`,
    );
  }
  const handlers = createMswHandlers(sandbox, { baseUrl: "/", ...(options.session === undefined ? {} : { session: options.session }) });
  // @mswjs/http-middleware is CommonJS and types its handlers with msw's CommonJS declarations;
  // these handlers carry msw's ESM declarations of the same class. The objects are the same at run
  // time (the parity test sends one table through both); only the two declaration chunks differ.
  const answer = createMiddleware(...(handlers as unknown as HttpMiddlewareHandlers)) as unknown as HttpMiddlewareFunction;
  const fallthrough = options.fallthrough ?? true;
  return (req, res, next) => {
    // Under app.use("/merchant", …) express has already cut the prefix from req.url.
    if (fallthrough && !isSandboxPath(pathOf(req.url ?? "/"))) {
      next();
      return;
    }
    // Anything thrown on the way in (http-middleware builds a URL from the Host before its own
    // catch: a Host with a space throws) goes to express's error handling, never unhandled.
    Promise.resolve()
      .then(() => answer(req as never, res as never, next))
      .catch(next);
  };
}

function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return end < 0 ? url : url.slice(0, end);
}
