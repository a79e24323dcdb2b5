import { type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { pipeline, type Transform, Writable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

/**
 * One HTTP request to the provider, its answer read with a byte limit on what comes over the wire
 * and another on what it inflates to: the body is streamed, counted as it arrives, and the request
 * is destroyed the moment either count passes the limit, so a provider sending an endless body or
 * a gzip bomb costs calibrate at most the limit in memory. node:http rather than fetch: fetch
 * inflates before the caller sees a byte, so the bytes on the wire cannot be counted.
 */

export interface AnswerRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** The most bytes read, both as received and once Content-Encoding is undone. */
  maxBytes: number;
  timeoutMs: number;
}

export interface RawAnswer {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

/** The answer passed `maxBytes`: as received (`received`), or once decoded (`decoded`). */
export class AnswerTooLarge extends Error {
  constructor(
    readonly limit: "received" | "decoded",
    readonly encoding: string | undefined,
  ) {
    super(`answer over the limit (${limit})`);
  }
}

/** What Content-Encoding names that calibrate undoes; anything else is read as it came. */
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

export function readAnswer(url: string, o: AnswerRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith("https:") ? httpsRequest : httpRequest;
    const req = send(url, {
      method: o.method,
      headers: {
        "accept-encoding": "gzip, deflate, br",
        ...(o.body !== undefined && { "content-length": String(Buffer.byteLength(o.body)) }),
        ...o.headers,
      },
    });
    // The first failure is the one reported: destroying the request makes the answer fail too.
    const fail = (e: Error) => {
      clearTimeout(timer);
      reject(e);
      req.destroy();
    };
    const timer = setTimeout(() => fail(Object.assign(new Error("no answer in time"), { code: "TimeoutError" })), o.timeoutMs);
    req.on("error", fail);
    req.on("response", (res: IncomingMessage) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      // Undone in reverse order of application (RFC 9110 §8.4); an unknown coding leaves the rest as it came.
      const codings = (headers["content-encoding"] ?? "")
        .split(",")
        .map((c) => c.trim().toLowerCase())
        .filter((c) => c !== "" && c !== "identity")
        .reverse();
      const known = codings.findIndex((c) => !DECODERS[c]);
      const decoders = (known === -1 ? codings : codings.slice(0, known)).map((c) => DECODERS[c]!());
      const encoding = decoders.length > 0 ? headers["content-encoding"] : undefined;
      let received = 0;
      res.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > o.maxBytes) res.destroy(new AnswerTooLarge("received", encoding));
      });
      const chunks: Buffer[] = [];
      let decoded = 0;
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          decoded += chunk.length;
          if (decoded > o.maxBytes) return done(new AnswerTooLarge("decoded", encoding));
          chunks.push(chunk);
          done();
        },
      });
      pipeline([res, ...decoders, sink], (e) => {
        if (e) return fail(e as Error);
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
      });
    });
    req.end(o.body);
  });
}
