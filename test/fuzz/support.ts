import { hasDotSegment } from "../../src/core/dot-segments.js";
import { connect } from "node:net";
import fc from "fast-check";
import type { TestServer } from "../support/server.js";

/**
 * Shared pieces of the fuzz suites (test/fuzz/*.fuzz.test.ts): the seed, a raw HTTP/1.1 client on
 * node:net (so a request can carry what fetch refuses: odd methods, control characters, duplicate
 * framing headers, bytes that are not UTF-8), and the properties every answer must have.
 */

/** One fixed default seed; FUZZ_SEED replays another run. */
export function fuzzSeed(): number {
  const env = process.env.FUZZ_SEED;
  const seed = env !== undefined && env.trim() !== "" ? Number(env) : 20260101;
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got '${env}'`);
  console.log(`fuzz seed: ${seed} (replay with FUZZ_SEED=${seed})`);
  return seed;
}

/** FUZZ_RUNS multiplies every property's number of cases, for longer local runs (default 1). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1);

/** fast-check parameters of one property: the run's seed and `numRuns` scaled by FUZZ_RUNS. */
export function fuzzParams(seed: number, numRuns: number): { seed: number; numRuns: number } {
  return { seed, numRuns: Math.max(1, Math.round(numRuns * RUNS)) };
}

/** Per-test timeout of every fuzz test (the config default of 20 s is too short for a property). */
export const FUZZ_TIMEOUT = 120_000;

// ---------------------------------------------------------------------------------------------
// raw HTTP

export interface RawRequest {
  method: string;
  /** The request target exactly as sent (path and query), as bytes (latin1 string). */
  target: string;
  /** Header lines in order, as bytes (latin1 strings); duplicates and odd casing allowed. */
  headers: Array<[string, string]>;
  body: Uint8Array;
  /** Default: a Content-Length with the body's length is added unless a header frames the body. */
  framing?: "content-length" | "none";
  version?: string;
}

export type RawOutcome =
  | { kind: "response"; status: number; headers: Map<string, string[]>; body: Buffer; raw: string }
  | { kind: "closed"; received: string }
  | { kind: "timeout"; received: string };

/** The request as bytes on the wire. */
export function serialize(r: RawRequest): Buffer {
  const lines = [`${r.method} ${r.target} ${r.version ?? "HTTP/1.1"}`];
  for (const [name, value] of r.headers) lines.push(`${name}: ${value}`);
  const framed = r.headers.some(([n]) => /^(content-length|transfer-encoding)$/i.test(n));
  if ((r.framing ?? "content-length") === "content-length" && !framed && (r.body.length > 0 || r.method === "POST" || r.method === "PUT")) {
    lines.push(`Content-Length: ${r.body.length}`);
  }
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1"), Buffer.from(r.body)]);
}

/** Makes fast-check print a request as its bytes on the wire (shortened), not as a huge object. */
export function shown(r: RawRequest): RawRequest {
  Object.defineProperty(r, fc.toStringMethod, { value: () => describeRequest(r), enumerable: false });
  return r;
}

/** A short, printable description of a request, for failure messages. */
export function describeRequest(r: RawRequest): string {
  const bytes = serialize(r);
  const shown = bytes.length > 600 ? bytes.subarray(0, 600) : bytes;
  return `${JSON.stringify(shown.toString("latin1"))}${bytes.length > 600 ? ` ... (${bytes.length} bytes in all)` : ""}`;
}

/**
 * Sends the bytes on a fresh connection and reads one final response (interim 1xx answers are
 * skipped). A connection that closes without a complete answer, or no answer within `timeoutMs`,
 * is reported as such: both are failures of the server, since every request sent here is complete.
 */
export function rawExchange(port: number, bytes: Buffer, options: { head?: boolean; timeoutMs?: number } = {}): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: "timeout", received: received.toString("latin1").slice(0, 300) }), options.timeoutMs ?? 8000);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const parsed = parseResponse(received, options.head ?? false);
      if (parsed) finish(parsed);
    });
    // A server may answer and close before it has read the whole body (413): writes then fail,
    // but the answer is still there to read.
    socket.on("error", () => undefined);
    socket.on("close", () =>
      finish(parseResponse(received, options.head ?? false) ?? { kind: "closed", received: received.toString("latin1").slice(0, 300) }),
    );
    socket.write(bytes);
  });
}

function parseResponse(buf: Buffer, head: boolean): RawOutcome | undefined {
  let start = 0;
  for (;;) {
    const end = buf.indexOf("\r\n\r\n", start, "latin1");
    if (end < 0) return undefined;
    const headText = buf.subarray(start, end).toString("latin1");
    const [statusLine, ...lines] = headText.split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "");
    if (!m) return { kind: "closed", received: buf.toString("latin1").slice(0, 300) };
    const status = Number(m[1]);
    const headers = new Map<string, string[]>();
    for (const line of lines) {
      const i = line.indexOf(":");
      if (i < 0) continue;
      const name = line.slice(0, i).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      start = bodyStart;
      continue;
    }
    const raw = headText;
    if (head || status === 204 || status === 304) return { kind: "response", status, headers, body: Buffer.alloc(0), raw };
    const te = headers.get("transfer-encoding")?.join(",").toLowerCase();
    if (te?.includes("chunked")) {
      const body = dechunk(buf.subarray(bodyStart));
      return body ? { kind: "response", status, headers, body, raw } : undefined;
    }
    const cl = headers.get("content-length")?.[0];
    if (cl === undefined) return undefined; // read to close
    const length = Number(cl);
    if (buf.length - bodyStart < length) return undefined;
    return { kind: "response", status, headers, body: buf.subarray(bodyStart, bodyStart + length), raw };
  }
}

function dechunk(buf: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const eol = buf.indexOf("\r\n", pos, "latin1");
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(pos, eol).toString("latin1"), 16);
    if (Number.isNaN(size)) return Buffer.alloc(0);
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    pos = eol + 2 + size + 2;
  }
}

// ---------------------------------------------------------------------------------------------
// the properties of every answer

const LEXIK_FAILURE = JSON.stringify({ code: 401, message: "Invalid credentials." });

/**
 * Every request gets a final answer; none is a 5xx; every non-2xx answer is
 * application/problem+json with string `code` and `error_description` members. The one exception
 * is the contract's own: the deprecated login's bad-credentials answer has Lexik's exact body
 * (docs/behaviour.md, "POST /api/login_check"), and the redirects to the QA page are 302s. Returns the response for further checks.
 */
export function assertAnswer(outcome: RawOutcome, request: RawRequest): Extract<RawOutcome, { kind: "response" }> {
  const what = `request ${describeRequest(request)}`;
  if (outcome.kind !== "response") {
    throw new Error(
      `no answer (${outcome.kind === "timeout" ? "hang" : "connection closed without a complete response"}) to ${what}; received ${JSON.stringify(outcome.received)}`,
    );
  }
  const { status } = outcome;
  if (status >= 500) throw new Error(`${status} answer to ${what}: ${outcome.body.toString("utf8").slice(0, 400)}`);
  if (status >= 200 && status < 300) return outcome;
  const head = request.method === "HEAD";
  const path = request.target.split("?")[0];
  const lexik = path === "/api/login_check" && status === 401 && outcome.body.toString("utf8") === LEXIK_FAILURE;
  if (lexik) return outcome;
  // The other exception: GET / (control plane on) and /__sandbox/ui send a browser to the QA page.
  const toPage =
    ["GET", "HEAD"].includes(request.method) &&
    (path === "/" || path === "/__sandbox/ui") &&
    status === 302 &&
    outcome.headers.get("location")?.join(", ") === "/__sandbox/ui/";
  if (toPage) return outcome;
  const type = outcome.headers.get("content-type")?.join(", ");
  if (type !== "application/problem+json") {
    throw new Error(
      `${status} answer without Content-Type: application/problem+json (got ${JSON.stringify(type)}) to ${what}; answer head: ${JSON.stringify(outcome.raw)}`,
    );
  }
  if (head) return outcome;
  let body: unknown;
  try {
    body = JSON.parse(outcome.body.toString("utf8"));
  } catch {
    throw new Error(`${status} answer whose body is not JSON to ${what}: ${JSON.stringify(outcome.body.toString("latin1").slice(0, 300))}`);
  }
  const b = body as Record<string, unknown> | null;
  if (!b || typeof b !== "object" || typeof b.code !== "string" || typeof b.error_description !== "string" || b.error_description === "") {
    throw new Error(`${status} problem without string code and error_description to ${what}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  if (b.status !== status) throw new Error(`${status} problem whose status member says ${String(b.status)} to ${what}`);
  return outcome;
}

/** True for an answer of the HTTP layer (not HTTP, headers too large or too many, too slow, no Host, an unmet Expect): the sandbox never saw the request. */
export function refusedByHttpLayer(res: Extract<RawOutcome, { kind: "response" }>, target?: string): boolean {
  // A HEAD's answer has no body to read the code from: its 400 is the HTTP layer's, unless the
  // path has a dot segment, which the pipeline refuses (and journals) before routing.
  if (!res.body.length)
    return [400, 408, 431].includes(res.status) && !(res.status === 400 && target !== undefined && hasDotSegment(target.split("?")[0]!));
  try {
    return ["http_malformed", "headers_too_large", "headers_too_many", "request_timeout", "host_missing", "expectation_unsupported"].includes(
      String((JSON.parse(res.body.toString("utf8")) as { code?: unknown }).code),
    );
  } catch {
    return false;
  }
}

/** The server is still up: GET /__sandbox/health answers 200 (health is open even with an admin token). */
export async function assertHealthy(t: TestServer, after: RawRequest): Promise<void> {
  const r = await t.call("/__sandbox/health");
  if (r.status !== 200) throw new Error(`health check answered ${r.status} after ${describeRequest(after)}: ${r.text.slice(0, 300)}`);
}

// ---------------------------------------------------------------------------------------------
// generators shared by the HTTP suites

const enc = new TextEncoder();
export const utf8 = (s: string): Uint8Array => enc.encode(s);

/** Values of the wrong (and right) types for any JSON field. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { maxDepth: 3 },
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "null",
    "true",
    "0",
    "-1",
    "1e309",
    "NaN",
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "\u0000",
    "\ud800",
    "sandbox-api-key",
    "sandbox-api-secret",
  ),
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e21, 1e300, -1e300, 5e-324),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
);

/** Keys that have a meaning on Object.prototype, and would bite a `obj[key]` lookup. */
export const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

/** A JSON object text whose keys come from `known` (the endpoint's own fields), prototype keys and anything. */
export function jsonObjectText(known: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof(fc.constantFrom(...known), fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 12 }));
  return (
    fc
      .array(fc.tuple(key, anyJsonValue), { maxLength: 5 })
      // Written by hand so a `__proto__` key is a real own key of the text, as a client would send it.
      .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`).join(",")}}`)
  );
}

/** Bodies that break parsers: random bytes, invalid UTF-8, deep nesting, huge, truncated, wrong top-level types. */
export function hostileBody(maxBodyBytes: number): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    // invalid UTF-8 inside an otherwise valid JSON object
    fc
      .tuple(
        fc.constantFrom([0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]),
        fc.constantFrom("api_key", "api_secret", "username", "password", "advance", "text"),
      )
      .map(([bad, field]) => Buffer.concat([Buffer.from(`{"${field}":"`), Buffer.from(bad), Buffer.from(`"}`)])),
    // deep nesting: 1000+ levels, balanced or not, arrays or objects
    fc.tuple(fc.integer({ min: 1000, max: 30_000 }), fc.constantFrom("array", "object", "unbalanced", "mixed")).map(([depth, kind]) => {
      if (kind === "array") return utf8("[".repeat(depth) + "]".repeat(depth));
      if (kind === "object") return utf8('{"a":'.repeat(depth) + "1" + "}".repeat(depth));
      if (kind === "unbalanced") return utf8("[".repeat(depth));
      return utf8('{"api_key":' + '[{"x":'.repeat(depth) + "0" + "}]".repeat(depth) + "}");
    }),
    // a string field around the body limit, and far beyond it
    fc
      .tuple(
        fc.constantFrom(-2, -1, 0, 1, 2, maxBodyBytes, 16 * maxBodyBytes),
        fc.constantFrom("api_key", "api_secret", "password", "text", "scenario"),
      )
      .map(([delta, field]) => {
        const overhead = `{"${field}":""}`.length;
        return utf8(`{"${field}":"${"x".repeat(Math.max(0, maxBodyBytes - overhead + delta))}"}`);
      }),
    // valid JSON of the wrong top-level type
    fc.jsonValue({ maxDepth: 3 }).map((v) => utf8(JSON.stringify(v) ?? "null")),
    // truncated or noisy JSON
    fc.tuple(jsonObjectText(["api_key", "api_secret"]), fc.nat()).map(([t, n]) => utf8(t.slice(0, n % (t.length + 1)))),
    fc
      .constantFrom(
        "",
        " ",
        "{",
        "}",
        "{}",
        "[]",
        "null",
        '{"a":1,}',
        "{'a':1}",
        '{"a":1}{"b":2}',
        "\ufeff{}",
        '{"a":1e999999}',
        '{"a":"\\ud800"}',
        '{"a":"\\u0000"}',
      )
      .map(utf8),
  );
}

/** Content types, right and wrong, oddly cased, with parameters. */
export const contentType = fc.oneof(
  fc.constantFrom(
    "application/json",
    "APPLICATION/JSON",
    "application/json; charset=utf-8",
    "application/json;charset=latin1",
    "application/problem+json",
    "application/vnd.api+json",
    "application/jsonx",
    "text/json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz",
    "application/octet-stream",
    "",
    ";",
    "application/json, text/plain",
    "*/*",
  ),
  fc.string({ maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, "")),
);

/** Content-Encoding claims that the body does not honour (gzip claimed, nothing compressed). */
export const contentEncoding = fc.constantFrom("gzip", "deflate", "br", "identity", "compress", "x-gzip", "gzip, gzip", "zstd", "bogus", "");

/**
 * Methods for the endpoint properties: the usual ones, others node parses, tokens nothing knows.
 * CONNECT, which node handles apart from every other method, is fuzzed by the methods property
 * (`anyMethod`), so it does not hide what the endpoint properties look for.
 */
export const method = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS") },
  { weight: 2, arbitrary: fc.constantFrom("TRACE", "PROPFIND", "MKCOL", "PURGE", "QUERY", "M-SEARCH", "REPORT", "SOURCE") },
  { weight: 1, arbitrary: fc.constantFrom("get", "Post", "FOO", "BREW", "G E T", "GET\x00", "") },
  { weight: 1, arbitrary: fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/).filter((m) => m !== "CONNECT") },
);

/** Every method, CONNECT included. */
export const anyMethod = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "TRACE",
      "CONNECT",
      "PROPFIND",
      "MKCOL",
      "LOCK",
      "PURGE",
      "QUERY",
      "M-SEARCH",
      "SEARCH",
      "REPORT",
      "LINK",
      "SOURCE",
      "ACL",
      "BIND",
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom("get", "Post", "FOO", "BREW", "G E T", "GET\x00", "") },
  { weight: 1, arbitrary: fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/) },
);

/** Query strings: tokens where they must not be, broken escapes, repeats, long. */
export const queryString = fc.oneof(
  fc.constant(""),
  fc.constantFrom(
    "?",
    "?access_token=abc",
    "?token=x&token=y",
    "?%ZZ",
    "?a=%",
    "?a=%00",
    "?jwt=eyJhbGciOiJub25lIn0.e30.",
    "?a[b]=1",
    "?__proto__=1",
    "?bearer",
    "?a=b&&c",
    "?+=+",
  ),
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom("access_token", "token", "session", "limit", "since", "merchant", "__proto__"), fc.string({ maxLength: 8 })),
        fc.string({ maxLength: 16 }),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((pairs) => "?" + pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")),
);

/** Path mutations: traversal, encoded separators, NUL, broken escapes, unicode, case, doubled slashes, long. */
export function mutatePath(path: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(path) },
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(
          (p: string) => p + "/",
          (p: string) => p + "/..",
          (p: string) => p + "/../",
          (p: string) => "/.." + p,
          (p: string) => p.replace(/\//g, "//"),
          (p: string) => p.replace(/\/([^/]*)$/, "%2F$1"),
          (p: string) => p + "%00",
          (p: string) => p + "%ZZ",
          (p: string) => p + "%",
          (p: string) => p.toUpperCase(),
          (p: string) => p + ";jsessionid=1",
          (p: string) => p + "#frag",
          (p: string) => p.replace("v2", "v1"),
          (p: string) => p + "/%2e%2e/%2e%2e",
          (p: string) => p + "/caf%C3%A9",
          (p: string) => p + "/%F0%9F%92%B3",
          (p: string) => p + "/\xc3\xa9",
          (p: string) => p + "/" + "a".repeat(4000),
          (p: string) => p + "/" + "a".repeat(20_000),
          (p: string) => "http://127.0.0.1" + p,
          (p: string) => p.slice(1),
        )
        .map((f) => f(path)),
    },
  );
}
