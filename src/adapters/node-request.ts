import type { IncomingMessage } from "node:http";
import type { SandboxRequest } from "../core/http-types.js";
import type { SecretView } from "../core/secret-index.js";

/**
 * Node's request as the sandbox's: its path and query, its headers (repeats kept), and its body
 * read within a limit. Shared by the server (node-http.ts) and the express middleware, which must
 * read requests as the server does.
 */

export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

export function sandboxRequestOf(
  req: IncomingMessage,
  headers: SandboxRequest["headers"],
  body: Uint8Array,
  secretsAtArrival?: SecretView,
): SandboxRequest {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return {
    method: req.method ?? "GET",
    path: pathOf(req),
    query: q < 0 ? "" : url.slice(q + 1),
    headers,
    body,
    secretsAtArrival,
  };
}

/**
 * The headers object of one request: its prototype is an empty object with no prototype of its own,
 * so, as with `Object.create(null)`, nothing is inherited and a header named `__proto__` or
 * `constructor` is just a header. Unlike `Object.create(null)`, whose objects start in V8's slow
 * dictionary mode, these get ordinary fast properties (docs/performance.md#a-requests-headers-object).
 */
function RequestHeaders(this: SandboxRequest["headers"]): void {}
RequestHeaders.prototype = Object.freeze(Object.create(null));

/**
 * The request's headers by lower-case name, a repeated header as an array of its values (the core
 * refuses, say, two Authorization headers, which node's `req.headers` would silently drop). Built
 * from rawHeaders in one pass, into an object that inherits nothing (RequestHeaders).
 */
export function distinctHeaders(req: IncomingMessage): SandboxRequest["headers"] {
  const out = new (RequestHeaders as unknown as new () => SandboxRequest["headers"])();
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

/** Most requests (a GET without a body) share this one empty body instead of allocating their own. */
export const NO_BODY = new Uint8Array(0);

/** A GET or HEAD that announces no body (neither Content-Length nor Transfer-Encoding). */
export function hasNoBody(method: string | undefined, headers: SandboxRequest["headers"]): boolean {
  return (method === "GET" || method === "HEAD") && headers["content-length"] === undefined && headers["transfer-encoding"] === undefined;
}

/**
 * Reads at most `limit` bytes; a longer body is cut there and reported as truncated. Undefined when
 * the request never arrived whole: the client aborted, or node's parser refused the framing.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<{ body: Uint8Array; truncated: boolean } | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: { body: Uint8Array; truncated: boolean } | undefined) => {
      if (done) return;
      done = true;
      req.off("data", onData);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        req.pause();
        finish({ body: Buffer.concat(chunks, limit), truncated: true });
      }
    };
    req.on("data", onData);
    req.once("end", () => finish({ body: Buffer.concat(chunks, size), truncated: false }));
    req.once("error", () => finish(undefined));
    req.once("close", () => finish(undefined));
  });
}
