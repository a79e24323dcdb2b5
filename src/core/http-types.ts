/**
 * The plain shapes the core speaks. Adapters (node:http, msw) translate to and from these;
 * the core never sees a framework object, so every rule of the auth model lives in one place.
 */

import type { SecretView } from "./secret-index.js";

/** A request as the core sees it. Header names are lower-case; repeated headers keep every value. */
export interface SandboxRequest {
  method: string;
  /** The path without the query string, exactly as received (not decoded). */
  path: string;
  /** The raw query string without the leading `?` ("" when there is none). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /**
   * The body bytes. Adapters stop reading at `limits.maxBodyBytes + 1` bytes, so the core can
   * answer 413 without ever holding an unbounded body.
   */
  body: Uint8Array;
  /**
   * The secrets as they were when its headers arrived. An adapter that waits for a body before
   * handing the request over takes them first: a session ended while the body was still uploading
   * then has its secrets redacted in this request's log line, journal entry and answer. The
   * pipeline redacts with these and the secrets of the moment it handles the request (a secret
   * added meanwhile counts too).
   */
  secretsAtArrival?: SecretView;
}

/** A response as the core produces it. Header names are lower-case. */
export interface SandboxResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /**
   * Set when the response should not be sent at all: the adapter destroys the socket instead
   * (used by the drop-connection scenario action).
   */
  dropConnection?: boolean;
  /**
   * A body that goes on after the headers (Server-Sent Events): `body` is then "" and the adapter
   * sends the headers without a content-length, then every chunk `open` writes, until it ends.
   */
  stream?: ResponseStream;
}

/** Where a streaming answer writes: the adapter's side of the connection. */
export interface StreamSink {
  /** Hands a chunk to the transport. */
  write(chunk: string): void;
  /** Chunks handed over and not yet taken by the network: how far the client has fallen behind. */
  pending(): number;
  /** Ends the answer (the adapter closes its side). */
  end(): void;
}

/** A streaming body: `open` starts it and returns what the adapter calls when the client leaves. */
export interface ResponseStream {
  open(sink: StreamSink): () => void;
  /** The answer will never be opened (a HEAD, or the client left first): frees what it holds. */
  cancel(): void;
}

/** Reads one header as a single value; repeated headers are joined the way HTTP folds them. */
export function headerValue(request: SandboxRequest, name: string): string | undefined {
  const value = request.headers[name];
  if (Array.isArray(value)) return value.join(", ");
  return value;
}

/** How many times a header was sent (0, 1 or more): some rules reject repeats. */
export function headerCount(request: SandboxRequest, name: string): number {
  const value = request.headers[name];
  if (value === undefined) return 0;
  return Array.isArray(value) ? value.length : 1;
}
