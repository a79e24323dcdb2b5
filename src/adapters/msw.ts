import { HttpResponse, http, type RequestHandler } from "msw";
import type { ResponseStream, SandboxRequest } from "../core/http-types.js";
import { internalsOf } from "../app/internals.js";
import type { Sandbox } from "../app/sandbox.js";
import { sessionMount } from "./session-mount.js";

/**
 * msw handlers built from the core, for in-process use (`setupServer(...createMswHandlers(sb, {
 * baseUrl }))`) and for `@mswjs/http-middleware`. One catch-all handler under the base URL hands
 * every request to `sandbox.handle`, so in-process answers are the server's answers, byte for byte.
 */
export interface MswHandlerOptions {
  /**
   * Where the integration sends its requests, e.g. `https://api.merchant.test`. With `setupServer`
   * in Node it must be absolute (msw leaves relative paths unmatched there). For
   * `@mswjs/http-middleware`, which resolves against the server's own origin, pass `"/"`.
   */
  baseUrl: string;
  /**
   * A session id (`sandbox.sessions.create()`): every request to `baseUrl` is then that session's,
   * as if sent under its base URL `/s/<id>`, so the integration keeps the base URL it is configured
   * with and all its requests (no credentials, a token in the query, a mistyped path) land in the
   * session's journal and report. The control plane (`/__sandbox/`) stays at the root. Without
   * it, a session is reached by appending its `base_url` path (`sessions.info(s).base_url`).
   */
  session?: string;
}

const EMPTY = new Uint8Array(0);

export function createMswHandlers(sandbox: Sandbox, options: MswHandlerOptions): RequestHandler[] {
  const base = options.baseUrl.replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]+/.test(base) && base !== "") {
    throw new TypeError(
      `baseUrl '${options.baseUrl}' must be an absolute http(s) URL such as 'https://api.merchant.test' (or '/' for @mswjs/http-middleware)`,
    );
  }
  const prefix = new URL(base || "http://x").pathname.replace(/\/+$/, "");
  const mounted = sessionMount(options.session);
  // Intercepted in-process (setupServer), a request went to the base URL and no DNS answer chose
  // where: its Host (a client may send one) is no name the control plane should judge. Mounted in a
  // server (@mswjs/http-middleware, base "/"), the Host is the network's and is kept.
  const inProcess = base !== "";
  return [
    http.all(`${base}/*`, async ({ request }) => {
      const url = new URL(request.url);
      const underBase = url.pathname.slice(prefix.length) || "/";
      const path = mounted(underBase);
      // No body stream (GET, HEAD): no need to read one. Else the secrets are taken before the
      // body is waited for (see SandboxRequest).
      const secretsAtArrival = request.body === null ? undefined : internalsOf(sandbox).merchants.secrets.view();
      const sandboxRequest: SandboxRequest = {
        method: request.method,
        path,
        query: url.search.slice(1),
        headers: headersOf(request, inProcess),
        body: request.body === null ? EMPTY : new Uint8Array(await request.arrayBuffer()),
        secretsAtArrival,
      };
      const response = await sandbox.handle(sandboxRequest);
      if (response.dropConnection) return HttpResponse.error();
      // A HEAD answer has GET's status and headers and no body (RFC 9110 §9.3.2): fetch would
      // otherwise hand the client the body the core computed.
      const body = request.method === "HEAD" ? null : response.stream ? readableOf(response.stream, request.signal) : response.body;
      return new HttpResponse(body, { status: response.status, headers: response.headers });
    }),
  ];
}

/** A streaming answer as a fetch body: chunks as the sandbox writes them, ended by either side. */
function readableOf(stream: ResponseStream, signal: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let stop = () => {};
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let ended = false;
        stop = stream.open({
          write: (chunk) => {
            if (!ended) controller.enqueue(encoder.encode(chunk));
          },
          // Chunks enqueued and not yet read (the high-water mark is 0).
          pending: () => Math.max(0, -(controller.desiredSize ?? 0)),
          end: () => {
            if (ended) return;
            ended = true;
            stop();
            controller.close();
          },
        });
        signal.addEventListener("abort", () => stop(), { once: true });
      },
      cancel: () => stop(),
    },
    new CountQueuingStrategy({ highWaterMark: 0 }),
  );
}

/** By lower-case name, into an object with no prototype: a header named `__proto__` is only a header. */
function headersOf(request: Request, withoutHost: boolean): SandboxRequest["headers"] {
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of request.headers) {
    if (withoutHost && name === "host") continue;
    out[name] = name === "authorization" ? unmergedCredentials(value) : value;
  }
  return out;
}

/**
 * A fetch `Headers` object joins a repeated header into one value ("Bearer a, Bearer b"), so the
 * core would see one malformed credential where node:http sees two headers and answers
 * authorization_header_repeated. Authorization holds one credential: a scheme and a token68 (no
 * comma, no space) or auth-params (`name=value`, after a comma). So a comma followed by another
 * `<scheme> <token>` can only be a second header folded in; it is split back into its values.
 * A comma anywhere else ("Bearer a,b") stays one malformed value, as node:http gets it too.
 */
function unmergedCredentials(value: string): string | string[] {
  const parts = value.split(/,[ \t]*(?=[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]* +[^ =,])/);
  return parts.length > 1 ? parts : value;
}
