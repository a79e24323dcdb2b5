import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_KEY, DEFAULT_PAYMENT_TOKEN, DEFAULT_SECRET, problem, startTestServer, type TestServer } from "../support/server.js";
import {
  FUZZ_TIMEOUT,
  PROTO_KEYS,
  anyJsonValue,
  assertAnswer,
  assertHealthy,
  contentEncoding,
  contentType,
  describeRequest,
  fuzzParams,
  fuzzSeed,
  hostileBody,
  jsonObjectText,
  anyMethod,
  method,
  mutatePath,
  queryString,
  rawExchange,
  refusedByHttpLayer,
  serialize,
  shown,
  utf8,
  type RawRequest,
} from "./support.js";

/**
 * Property-based fuzzing of the merchant API over real HTTP (raw node:net sockets, so a request may
 * carry what fetch refuses), against the real node:http server on port 0. For every case:
 *  - the request gets a final answer (no hang, no silent close), and never a 5xx;
 *  - every non-2xx answer is application/problem+json with string `code` and `error_description`
 *    (the deprecated login's Lexik failure body is the contract's one exception);
 *  - the server is still up: GET /__sandbox/health answers 200;
 *  - the journal grows by exactly one entry for a request the sandbox handled (and that entry is
 *    this request: method and status), by none for a control-plane path or a request refused as
 *    malformed HTTP before it reached the sandbox;
 *  - a refused request changes nothing: an access token issued before the run still gives 200,
 *    and the clock, the sessions and the published keys read as they did before the run.
 */

const SEED = fuzzSeed();
const MAX_BODY = 64 * 1024;
const ACCESS = "$ACCESS$";

let t: TestServer;
let accessToken: string;
let baseline: { clock: string; sessions: string; jwks: string };

async function lastJournalSeq(): Promise<{ seq: number; entry: Record<string, unknown> | undefined }> {
  const r = await t.call("/__sandbox/requests?limit=1");
  if (r.status !== 200) throw new Error(`GET /__sandbox/requests answered ${r.status}: ${r.text.slice(0, 300)}`);
  const entry = r.json.requests.at(-1) as Record<string, unknown> | undefined;
  return { seq: entry ? Number(entry.seq) : 0, entry };
}

async function sharedState(): Promise<{ clock: string; sessions: string; jwks: string }> {
  const [clock, sessions, jwks] = await Promise.all([t.call("/__sandbox/clock"), t.call("/__sandbox/sessions"), t.call("/.well-known/jwks.json")]);
  return { clock: `${clock.status} ${clock.text}`, sessions: `${sessions.status} ${sessions.text}`, jwks: `${jwks.status} ${jwks.text}` };
}

/** Every log line the sandbox produced during the run: what the CLI would print, to scan for secrets. */
const printed: string[] = [];

beforeAll(async () => {
  t = await startTestServer({
    onRequest: (entry) => printed.push(JSON.stringify(entry)),
    onInternalError: (error, entry) => printed.push(`internal error ${String(error)} ${JSON.stringify(entry)}`),
  });
  accessToken = await t.token();
  baseline = await sharedState();
});

// After every test of the file, in whatever order they ran: a scan of everything the sandbox
// printed (its request log) and journaled over the whole run, for every secret and token the run
// used. A leak fails the file ("no api_secret, payment token, password or JWT in clear").
afterAll(async () => {
  try {
    if (t) await expectNoSecretInClear();
  } finally {
    await t?.close();
  }
});

async function expectNoSecretInClear(): Promise<void> {
  const journal = await t.call("/__sandbox/requests");
  expect(journal.status).toBe(200);
  expect(printed.length, "the run printed log lines to scan").toBeGreaterThan(0);
  const everything = [...printed, journal.text];
  const secrets = [DEFAULT_SECRET, DEFAULT_PAYMENT_TOKEN, "sandbox-password", accessToken, accessToken.split(".")[2]!];
  const leaks = everything.flatMap((text) => [
    ...secrets.filter((secret) => text.includes(secret)).map((secret) => `${secret.slice(0, 12)}... in ${text.slice(0, 200)}`),
    ...(/eyJ[\w-]{10,}\.eyJ[\w-]{10,}/.test(text) ? [`a JWT shape in ${text.slice(0, 200)}`] : []),
  ]);
  expect(leaks, "no api_secret, payment token, password or JWT in clear in any log line or journal entry").toEqual([]);
}

/** Fills the placeholders of the generators with this run's values. */
function materialize(r: RawRequest): RawRequest {
  const fill = (s: string) => s.split(ACCESS).join(accessToken);
  return { ...r, target: fill(r.target), headers: r.headers.map(([n, v]) => [fill(n), fill(v)]) };
}

/** Sends one fuzz case and checks every property of the file. */
async function check(generated: RawRequest): Promise<void> {
  const request = materialize(generated);
  const before = (await lastJournalSeq()).seq;
  const outcome = await rawExchange(t.server.port, serialize(request), { head: request.method === "HEAD" });
  const res = assertAnswer(outcome, request);
  await assertHealthy(t, request);

  // The journal: one entry per request the sandbox handled, none for the control plane.
  const path = request.target.split("?")[0]!;
  const control = path.startsWith("/__sandbox/");
  const { seq, entry } = await lastJournalSeq();
  const grown = seq - before;
  const what = describeRequest(request);
  if (control) {
    if (grown !== 0) throw new Error(`a control-plane request added ${grown} journal entries: ${what}`);
  } else if (grown === 1) {
    if (entry?.method !== request.method || entry?.status !== res.status) {
      throw new Error(`the journal entry (${JSON.stringify(entry)}) is not this request (${request.method}, answered ${res.status}): ${what}`);
    }
  } else if (grown === 0) {
    // Only a request the HTTP layer refuses (not HTTP, headers too large, too slow, no Host, an unmet Expect) never reaches the sandbox.
    if (!refusedByHttpLayer(res)) {
      const code = res.body.length ? (JSON.parse(res.body.toString("utf8")) as { code?: unknown }).code : `(HEAD, ${res.status})`;
      throw new Error(`a ${res.status} answer (${String(code)}) left no journal entry: ${what}`);
    }
  } else {
    throw new Error(`one request added ${grown} journal entries: ${what}`);
  }

  // Nothing shared moved.
  const now = await sharedState();
  if (now.clock !== baseline.clock || now.sessions !== baseline.sessions || now.jwks !== baseline.jwks) {
    throw new Error(`state changed after ${res.status} to ${what}: ${JSON.stringify({ before: baseline, after: now })}`);
  }
  // A refused request leaves the token issued before the run working.
  if (res.status < 200 || res.status >= 300) {
    const r = await t.call("/api/v2/payment/fuzz-check", { headers: { authorization: `Bearer ${accessToken}` } });
    if (r.status !== 200) throw new Error(`the token issued before the run now gets ${r.status} (${r.text.slice(0, 200)}) after ${what}`);
  }
}

const property = (arb: fc.Arbitrary<RawRequest>) => fc.asyncProperty(arb, check);
const params = (numRuns: number) => fuzzParams(SEED, numRuns);

// ---------------------------------------------------------------------------------------------
// generators

const HOST: [string, string] = ["Host", "127.0.0.1"];
const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : (JSON.stringify(v) ?? "null")).toString("base64url");

/** JWT-shaped garbage: headers and claims of every type, weird algorithms and kids, real and fake signatures. */
const jwtLike: fc.Arbitrary<string> = fc
  .tuple(
    fc.record(
      {
        alg: fc.oneof(fc.constantFrom("RS256", "none", "HS256", "ES256", "RS512", "", "rs256", "__proto__"), anyJsonValue),
        kid: fc.oneof(fc.constantFrom(...PROTO_KEYS, "", "kid-not-in-this-sandbox"), anyJsonValue),
        typ: fc.oneof(fc.constantFrom("at+jwt", "JWT", "JOSE"), anyJsonValue),
        crit: fc.oneof(fc.constant(["exp"]), anyJsonValue),
        b64: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        sub: fc.oneof(fc.constantFrom("merchant_sandbox_default", ...PROTO_KEYS), anyJsonValue),
        exp: anyJsonValue,
        iat: anyJsonValue,
        nbf: anyJsonValue,
        iss: fc.oneof(fc.constant("https://merchant-sandbox.test"), anyJsonValue),
        aud: fc.oneof(fc.constant("merchant-api"), fc.constant(["merchant-api"]), anyJsonValue),
        jti: anyJsonValue,
        scope: anyJsonValue,
      },
      { requiredKeys: [] },
    ),
    fc.oneof(
      fc.constant(""),
      fc.base64String({ maxLength: 400 }).map((s) => s.replace(/\+/g, "-").replace(/\//g, "_").replace(/=/g, "")),
    ),
    fc.constantFrom("3", "5", "2", "json-payload"),
  )
  .map(([h, p, sig, shape]) => {
    if (shape === "5") return `${b64(h)}.${b64(p)}.${sig}.x.y`;
    if (shape === "2") return `${b64(h)}.${b64(p)}`;
    if (shape === "json-payload") return `${b64(h)}.${b64(JSON.stringify(p).slice(0, 5))}.${sig}`;
    return `${b64(h)}.${b64(p)}.${sig}`;
  });

/** The real access token, damaged. */
const mangledAccess = fc
  .constantFrom(
    (s: string) => s + "x",
    (s: string) => s.slice(0, -1),
    (s: string) => s.slice(0, s.length >> 1),
    (s: string) => s.replace(/\.[^.]*$/, ".AAAA"),
    (s: string) => s.split(".").reverse().join("."),
    (s: string) => s + "==",
    (s: string) => s.toUpperCase(),
    (s: string) => `${s} ${s}`,
    (s: string) => s.split(".").slice(0, 2).join(".") + ".",
  )
  .map((f) => f(ACCESS));

/** Authorization header values: right, wrong scheme, wrong token, malformed, odd spacing and case. */
const authorizationValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    `Bearer ${ACCESS}`,
    `bearer ${ACCESS}`,
    `BEARER   ${ACCESS}`,
    `Bearer ${DEFAULT_PAYMENT_TOKEN}`,
    `Bearer ${ACCESS} `,
    "Bearer",
    "Bearer ",
    "Basic c2FuZGJveDpzZWNyZXQ=",
    "Token abc",
    "Bearer a b",
    'Bearer "x"',
    "Bearer ====",
  ),
  mangledAccess.map((s) => `Bearer ${s}`),
  jwtLike.map((s) => `Bearer ${s}`),
  fc.string({ maxLength: 60 }).map((s) => `Bearer ${s.replace(/[\r\n]/g, "")}`),
  fc.string({ unit: "binary-ascii", maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, "")),
  fc.constant(`Bearer ${"A".repeat(8000)}`),
);

const anyString = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("", " ", DEFAULT_KEY, DEFAULT_SECRET, DEFAULT_PAYMENT_TOKEN));
const headerSafe = (s: string) => s.replace(/[\r\n]/g, "");

/** A header whose name is one the endpoint reads, oddly cased, or a prototype key. */
const oddCase = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((flags) => [...name].map((c, i) => (flags[i] ? c.toUpperCase() : c.toLowerCase())).join(""));

/** A body with its content type: JSON for the endpoint, wrong types, or hostile bytes. */
function bodyFor(fields: readonly string[]): fc.Arbitrary<{ body: Uint8Array; type: string | undefined }> {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        body: jsonObjectText(fields).map(utf8),
        type: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: contentType }).map((c) => c ?? "application/json"),
      }),
    },
    { weight: 3, arbitrary: fc.record({ body: hostileBody(MAX_BODY), type: fc.option(contentType, { nil: undefined }) }) },
    { weight: 1, arbitrary: fc.record({ body: fc.constant(new Uint8Array(0)), type: fc.option(contentType, { nil: undefined }) }) },
  );
}

function request(parts: {
  method: fc.Arbitrary<string>;
  path: fc.Arbitrary<string>;
  query?: fc.Arbitrary<string>;
  headers: fc.Arbitrary<Array<[string, string]>>;
  body: fc.Arbitrary<{ body: Uint8Array; type: string | undefined }>;
}): fc.Arbitrary<RawRequest> {
  return fc
    .record({
      method: parts.method,
      path: parts.path,
      query: parts.query ?? queryString,
      headers: parts.headers,
      body: parts.body,
      encoding: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: contentEncoding }),
    })
    .map(({ method, path, query, headers, body, encoding }) =>
      shown({
        method,
        target: path + query,
        headers: [
          HOST,
          ...(body.type === undefined ? [] : ([["Content-Type", headerSafe(body.type)]] as Array<[string, string]>)),
          ...(encoding === undefined ? [] : ([["Content-Encoding", encoding]] as Array<[string, string]>)),
          ...headers,
        ],
        body: body.body,
      }),
    );
}

const usualMethod = (preferred: string) => fc.oneof({ weight: 3, arbitrary: fc.constant(preferred) }, { weight: 1, arbitrary: method });

const credentialHeaders: fc.Arbitrary<Array<[string, string]>> = fc
  .array(
    fc.tuple(
      fc.oneof(oddCase("x-api-key"), oddCase("x-api-secret")),
      fc.oneof(anyString, fc.constantFrom(DEFAULT_KEY, DEFAULT_SECRET)).map(headerSafe),
    ),
    { maxLength: 3 },
  )
  .map((hs) => hs as Array<[string, string]>);

const authHeaders: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  { weight: 1, arbitrary: fc.constant([] as Array<[string, string]>) },
  { weight: 4, arbitrary: fc.tuple(oddCase("authorization"), authorizationValue).map((h) => [h as [string, string]]) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.tuple(oddCase("authorization"), authorizationValue), { minLength: 2, maxLength: 3 })
      .map((hs) => hs as Array<[string, string]>),
  },
);

// ---------------------------------------------------------------------------------------------

describe("fuzz: merchant API over real HTTP", { timeout: FUZZ_TIMEOUT }, () => {
  it("POST /api/v2/auth/token: random credentials, wrong types, hostile bodies, headers", async () => {
    await fc.assert(
      property(
        request({
          method: usualMethod("POST"),
          path: mutatePath("/api/v2/auth/token"),
          query: fc.oneof({ weight: 4, arbitrary: fc.constant("") }, { weight: 1, arbitrary: queryString }),
          headers: credentialHeaders,
          body: bodyFor(["api_key", "api_secret"]),
        }),
      ),
      params(250),
    );
  });

  it("/api/v2/payment/* and /api/v2/cashout/*: any method, every kind of Authorization, tokens in the query", async () => {
    const segment = fc.oneof(fc.constantFrom("", "orders", "x/y/z", "init/", "refunds/1", "%2e%2e", "\xc3\xa9"), fc.webSegment());
    await fc.assert(
      property(
        request({
          method: method,
          path: fc.tuple(fc.constantFrom("/api/v2/payment", "/api/v2/cashout"), segment).chain(([g, s]) => mutatePath(s === "" ? g : `${g}/${s}`)),
          headers: authHeaders,
          body: bodyFor(["amount", "currency", "access_token"]),
        }),
      ),
      params(300),
    );
  });

  it("POST /api/v2/payment/init: payment token, JWT, garbage, order fields of every type", async () => {
    await fc.assert(
      property(
        request({
          method: usualMethod("POST"),
          path: mutatePath("/api/v2/payment/init"),
          headers: authHeaders,
          body: bodyFor(["amount", "currency", "order_id", "reference", "payment_token"]),
        }),
      ),
      params(250),
    );
  });

  it("POST /api/login_check: usernames, e-mails and passwords of every type", async () => {
    await fc.assert(
      property(
        request({
          method: usualMethod("POST"),
          path: mutatePath("/api/login_check"),
          query: fc.oneof({ weight: 4, arbitrary: fc.constant("") }, { weight: 1, arbitrary: queryString }),
          headers: fc.constant([]),
          body: fc.oneof(
            bodyFor(["username", "email", "password"]),
            fc.constantFrom(
              { body: utf8('{"username":"merchant@sandbox.test","password":"wrong"}'), type: "application/json" },
              { body: utf8('{"email":"MERCHANT@SANDBOX.TEST","password":"sandbox-password"}'), type: "application/json" },
              { body: utf8('{"username":"merchant@sandbox.test","password":"sandbox-password"}'), type: "text/plain" },
            ),
          ),
        }),
      ),
      params(200),
    );
  });

  it("GET /.well-known/jwks.json, GET /__sandbox/health and unknown paths: methods, paths, queries", async () => {
    const path = fc.oneof(
      fc.constantFrom(
        "/.well-known/jwks.json",
        "/__sandbox/health",
        "/",
        "/api",
        "/api/v2",
        "/api/v2/",
        "/api/v1/auth/token",
        "/API/V2/AUTH/TOKEN",
        "/api/login_check/",
        "/__sandbox",
        "/.well-known/",
        "*",
      ),
      fc.webPath().map((p) => (p.startsWith("/") ? p : `/${p}`)),
      fc.string({ unit: "binary", maxLength: 40 }).map((s) => "/" + encodeURI(s).replace(/%5B|%5D/g, "")),
    );
    await fc.assert(
      property(
        request({
          method: method,
          path: path.chain(mutatePath),
          headers: fc.constant([]),
          body: fc.oneof(
            { weight: 3, arbitrary: fc.constant({ body: new Uint8Array(0), type: undefined }) },
            { weight: 1, arbitrary: bodyFor(["a"]) },
          ),
        }),
      ),
      params(250),
    );
  });

  it("every endpoint, any method: including the ones node parses but nothing serves (TRACE, CONNECT …)", async () => {
    const endpoint = fc.constantFrom(
      "/api/v2/auth/token",
      "/api/v2/payment/orders",
      "/api/v2/cashout/x",
      "/api/v2/payment/init",
      "/api/login_check",
      "/.well-known/jwks.json",
      "/__sandbox/health",
      "/nope",
    );
    await fc.assert(
      property(
        request({
          method: anyMethod,
          path: endpoint,
          query: fc.constant(""),
          headers: fc.constant([]),
          body: fc.oneof(fc.constant({ body: new Uint8Array(0), type: undefined }), fc.constant({ body: utf8("{}"), type: "application/json" })),
        }),
      ),
      params(200),
    );
  });

  const endpoint = fc.constantFrom(
    "/api/v2/auth/token",
    "/api/v2/payment/orders",
    "/api/v2/cashout/x",
    "/api/v2/payment/init",
    "/api/login_check",
    "/.well-known/jwks.json",
    "/__sandbox/health",
    "/nope",
  );
  const validBody = fc.constantFrom(
    "",
    '{"api_key":"sandbox-api-key","api_secret":"sandbox-api-secret"}',
    '{"username":"merchant@sandbox.test","password":"sandbox-password"}',
  );

  it("headers: duplicates, 16 KB values, odd casing, prototype names, control characters", async () => {
    const name = fc.oneof(
      fc.constantFrom(...PROTO_KEYS),
      oddCase("authorization"),
      oddCase("content-type"),
      oddCase("x-api-key"),
      oddCase("x-api-secret"),
      oddCase("x-admin-token"),
      oddCase("content-encoding"),
      oddCase("connection"),
      oddCase("upgrade"),
      fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/),
    );
    const value = fc.oneof(
      { weight: 4, arbitrary: fc.string({ maxLength: 40 }).map(headerSafe) },
      {
        weight: 1,
        arbitrary: fc.constantFrom("close", "keep-alive", "upgrade", "h2c", "websocket", `Bearer ${ACCESS}`, DEFAULT_KEY, DEFAULT_SECRET),
      },
      { weight: 1, arbitrary: fc.constantFrom(8 * 1024, 16 * 1024, 17 * 1024).map((n) => "v".repeat(n)) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.string({ maxLength: 10 }),
            fc.constantFrom("\x00", "\x01", "\x07", "\x1b", "\x7f", "\t", "\r", "\n", "\r\n ", "\xff", "\xc3\xa9"),
            fc.string({ maxLength: 10 }),
          )
          .map(([a, c, b]) => headerSafe(a) + c + headerSafe(b)),
      },
    );
    const header = fc.tuple(name, value);
    const headers = fc.oneof(
      fc.array(header, { maxLength: 6 }),
      header.chain((h) => fc.integer({ min: 2, max: 4 }).map((n) => Array.from({ length: n }, () => h))),
    );
    const arb = fc.record({ method: fc.constantFrom("GET", "POST", "DELETE"), path: endpoint, headers, body: validBody }).map(
      ({ method, path, headers, body }): RawRequest =>
        shown({
          method,
          target: path,
          headers: [HOST, ["Content-Type", "application/json"], ...(headers as Array<[string, string]>)],
          body: utf8(body),
        }),
    );
    await fc.assert(property(arb), params(250));
  });

  it("framing: Host, Expect, Transfer-Encoding, Content-Length, HTTP version", async () => {
    const framing = fc.constantFrom("content-length", "chunked", "chunked+cl", "two-cl", "bad-chunk", "chunk-then-garbage", "none");
    const arb = fc
      .record({
        method: fc.constantFrom("GET", "POST", "DELETE"),
        path: endpoint,
        host: fc.constantFrom("one", "one", "one", "none", "two", "empty"),
        expect: fc.oneof(
          { weight: 4, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.constantFrom("100-continue", "100-CONTINUE", "x", "") },
        ),
        version: fc.constantFrom("HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0"),
        framing,
        body: validBody,
      })
      .map(({ method, path, host, expect, version, framing, body }): RawRequest => {
        const hosts: Array<[string, string]> = host === "one" ? [HOST] : host === "two" ? [HOST, HOST] : host === "empty" ? [["Host", ""]] : [];
        const h: Array<[string, string]> = [
          ...hosts,
          ["Content-Type", "application/json"],
          ...(expect === undefined ? [] : ([["Expect", expect]] as Array<[string, string]>)),
        ];
        const bytes = utf8(body);
        const base = { method, target: path, version };
        if (framing === "chunked") return { ...base, headers: [...h, ["Transfer-Encoding", "chunked"]], body: chunked(bytes), framing: "none" };
        if (framing === "chunked+cl")
          return {
            ...base,
            headers: [...h, ["Transfer-Encoding", "chunked"], ["Content-Length", String(bytes.length)]],
            body: chunked(bytes),
            framing: "none",
          };
        if (framing === "two-cl")
          return {
            ...base,
            headers: [...h, ["Content-Length", String(bytes.length)], ["Content-Length", String(bytes.length + 1)]],
            body: bytes,
            framing: "none",
          };
        if (framing === "bad-chunk")
          return { ...base, headers: [...h, ["Transfer-Encoding", "chunked"]], body: utf8("zz\r\n{}\r\n0\r\n\r\n"), framing: "none" };
        // A well-formed first chunk, then framing that is not HTTP: the request as a whole is malformed.
        if (framing === "chunk-then-garbage")
          return {
            ...base,
            headers: [...h, ["Transfer-Encoding", "chunked"]],
            body: Buffer.concat([Buffer.from(chunked(bytes)).subarray(0, bytes.length ? -5 : 0), utf8("zz\r\n\r\n")]),
            framing: "none",
          };
        if (framing === "none") return { ...base, headers: h, body: new Uint8Array(0), framing: "none" };
        return { ...base, headers: h, body: bytes };
      })
      .map(shown);
    await fc.assert(property(arb), params(200));
  });
});

function chunked(body: Uint8Array): Uint8Array {
  if (body.length === 0) return utf8("0\r\n\r\n");
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), Buffer.from(body), Buffer.from("\r\n0\r\n\r\n")]);
}

// ---------------------------------------------------------------------------------------------
// What the fuzzer found, shrunk: each a plain request and the answer the contract asks for.

describe("fuzz findings, minimal reproducers", { timeout: FUZZ_TIMEOUT }, () => {
  async function send(r: RawRequest) {
    const outcome = await rawExchange(t.server.port, serialize(r), { head: r.method === "HEAD" });
    return assertAnswer(outcome, r);
  }

  // Regression tests for what the fuzzer found (each used to be a closed connection or node's
  // bare answer with no body).
  const problemOf = (res: { body: Buffer }) => JSON.parse(res.body.toString("utf8"));

  it("CONNECT gets a 405 problem+json naming the method to use, not a closed connection", async () => {
    const res = await send({ method: "CONNECT", target: "/api/v2/auth/token", headers: [HOST], body: new Uint8Array(0) });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toEqual(["POST"]);
    expect(problemOf(res)).toEqual(
      problem(
        405,
        "Method Not Allowed",
        "method_not_allowed",
        "CONNECT is not allowed on /api/v2/auth/token. Use POST.",
        "/api/v2/auth/token",
        "method_not_allowed",
      ),
    );
  });

  it("an Expect header other than 100-continue gets a 417 problem+json, not node's bare 417", async () => {
    const res = await send({ method: "GET", target: "/__sandbox/health", headers: [HOST, ["Expect", "x"]], body: new Uint8Array(0) });
    expect(res.status).toBe(417);
    expect(problemOf(res)).toEqual(
      problem(
        417,
        "Expectation Failed",
        "expectation_unsupported",
        "This sandbox meets only 'Expect: 100-continue', not 'x'. Remove the Expect header or send 100-continue.",
        "/__sandbox/health",
        "invalid_request",
      ),
    );
  });

  it("an HTTP/1.1 request without Host gets a 400 host_missing problem+json, not node's empty 400", async () => {
    const res = await send({ method: "GET", target: "/__sandbox/health", headers: [], body: new Uint8Array(0) });
    expect(res.status).toBe(400);
    expect(problemOf(res)).toEqual(
      problem(
        400,
        "Bad Request",
        "host_missing",
        "An HTTP/1.1 request must carry a Host header (RFC 9112 §3.2). Send 'Host: <host>:<port>' as every HTTP client does.",
        "/__sandbox/health",
        "invalid_request",
      ),
    );
  });

  it("a request refused by the HTTP layer (broken chunked framing) is not also handled and journaled by the sandbox", async () => {
    const r: RawRequest = {
      method: "GET",
      target: "/api/v2/auth/token",
      headers: [HOST, ["Content-Type", "application/json"], ["Transfer-Encoding", "chunked"]],
      body: utf8("zz\r\n{}\r\n0\r\n\r\n"),
      framing: "none",
    };
    for (let i = 0; i < 20; i++) {
      const before = await lastJournalSeq();
      const res = await send(r);
      // The sandbox may get to the request after the HTTP layer has answered: give it that time.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = await lastJournalSeq();
      expect({ status: res.status, journaled: after.seq === before.seq ? "nothing" : after.entry }).toEqual({ status: 400, journaled: "nothing" });
    }
  });

  it("a token request whose chunked framing breaks after valid credentials is refused (400) and issues no token", async () => {
    const creds = '{"api_key":"sandbox-api-key","api_secret":"sandbox-api-secret"}';
    const r: RawRequest = {
      method: "POST",
      target: "/api/v2/auth/token",
      headers: [HOST, ["Content-Type", "application/json"], ["Transfer-Encoding", "chunked"]],
      body: utf8(`${creds.length.toString(16)}\r\n${creds}\r\nzz\r\n\r\n`),
      framing: "none",
    };
    const before = await lastJournalSeq();
    const res = await send(r);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = await lastJournalSeq();
    expect({ status: res.status, journaled: after.seq === before.seq ? "nothing" : after.entry }).toEqual({ status: 400, journaled: "nothing" });
  });
});
