import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { Sandbox, SandboxOptions } from "../../src/app/sandbox.js";
import { startServer, type RunningServer } from "../../src/adapters/node-http.js";
import type { SessionInfo } from "../../src/control/session-info.js";
import { testSandbox, type TestKeyOptions } from "./keys.js";

/**
 * Black-box harness: a real sandbox behind the real node:http server on port 0, and a fetch
 * wrapper that returns status, headers and the parsed body for exact assertions.
 */
export interface TestServer {
  sandbox: Sandbox;
  server: RunningServer;
  url: string;
  /** Sends a real HTTP request to the server. */
  call(path: string, init?: RequestInit): Promise<Reply>;
  /** Gets an access token for the default merchant (or the given credentials). */
  token(apiKey?: string, apiSecret?: string): Promise<string>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /**
   * The parsed JSON body, or undefined when the body is not JSON. Tests compare it whole with
   * toEqual or read one member of a body they have just checked, so it is left untyped.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the body of any endpoint; asserted whole, not trusted
  json: any;
}

export const DEFAULT_KEY = "sandbox-api-key";
export const DEFAULT_SECRET = "sandbox-api-secret";
export const DEFAULT_PAYMENT_TOKEN = "sandbox-payment-token";
export const DEFAULT_MERCHANT_ID = "merchant_sandbox_default";
/** A fixed instant for frozen clocks: 2026-01-01T00:00:00Z. */
export const T0 = Date.UTC(2026, 0, 1);

/** What a test server is started with: the sandbox's options, and whether its keys are generated (keys.ts). */
export type TestServerOptions = SandboxOptions & TestKeyOptions;

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const sandbox = await testSandbox({ frozenAt: T0, ...options });
  const server = await startServer(sandbox, { port: 0 });
  const call = async (path: string, init: RequestInit = {}): Promise<Reply> => {
    // A redirect is an answer to assert on (GET / sends a browser to the QA page), not one to follow.
    const res = await fetch(server.url + path, { redirect: "manual", ...init });
    const text = isEventStream(res.headers.get("content-type")) ? await firstChunk(res) : await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  return {
    sandbox,
    server,
    url: server.url,
    call,
    async token(apiKey = DEFAULT_KEY, apiSecret = DEFAULT_SECRET) {
      const r = await call("/api/v2/auth/token", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: apiKey, api_secret: apiSecret }),
      });
      if (r.status !== 200) throw new Error(`token exchange failed: ${r.status} ${r.text}`);
      return r.json.access_token as string;
    },
    close: async () => {
      await server.close();
    },
  };
}

/**
 * Servers that live for one test: `const start = serversPerTest();` at the top of a file or
 * describe, then `const t = await start(options)` inside a test. Every server started is closed
 * after its test, whether it passed or not, so no test sees another's state. `keys`: for every
 * server of these tests (`{ generateKeys: true }` in the tests about key generation).
 */
export function serversPerTest(keys: TestKeyOptions = {}): (options?: TestServerOptions) => Promise<TestServer> {
  const open: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((t) => t.close()));
  });
  return async (options = {}) => {
    const t = await startTestServer({ ...keys, ...options });
    open.push(t);
    return t;
  };
}

/**
 * One server for every test of the enclosing describe (or file): started before its first test,
 * closed after its last. For read-only tests only; a test that changes the server's state (clock,
 * ledger, keys) resets what it changed or uses serversPerTest. `options` may be a function when
 * they need async work first (a generated signing key).
 */
export function serverPerDescribe(options: TestServerOptions | (() => Promise<TestServerOptions>) = {}): () => TestServer {
  let t: TestServer | undefined;
  beforeAll(async () => {
    t = await startTestServer(typeof options === "function" ? await options() : options);
  });
  afterAll(async () => {
    await t?.close();
  });
  return () => {
    if (!t) throw new Error("serverPerDescribe: the server is used outside a test (it starts in beforeAll)");
    return t;
  };
}

/** POST a JSON body. */
export function postJson(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
}

/** POST without a body, declared as JSON all the same: the control plane refuses any other POST. */
export function postEmpty(headers: Record<string, string> = {}): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json", ...headers } };
}

/** The problem+json body the mapper produces, for exact comparison. */
export function problem(status: number, title: string, code: string, description: string, instance: string, error?: string) {
  return {
    type: `urn:merchant-sandbox:problem:${code}`,
    title,
    status,
    detail: description,
    code,
    ...(error ? { error } : {}),
    error_description: description,
    instance,
  };
}

/** A reply built from raw parts: status, headers in order (repeats kept), and the body text. */
export function toReply(status: number, rawHeaders: Array<[string, string]>, text: string): Reply {
  const headers = new Headers();
  for (const [name, value] of rawHeaders) headers.append(name, value);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

/**
 * A request through node:http, where a header may be given several times (fetch would merge two
 * Authorization headers into one, so the sandbox's refusal of repeats could not be reached).
 */
export function requestWithRepeatedHeaders(
  url: string,
  path: string,
  headers: Record<string, string | string[]>,
  init: { method?: string; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + path, { method: init.method ?? "GET" });
    for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
    req.on("error", reject);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      const done = () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve(toReply(res.statusCode ?? 0, pairs, Buffer.concat(chunks).toString("utf8")));
      };
      // An event stream never ends on its own: its first chunk is the answer read.
      const stream = isEventStream(res.headers["content-type"]);
      res.on("data", (c: Buffer) => {
        chunks.push(c);
        if (stream) {
          done();
          req.destroy();
        }
      });
      res.on("error", (e) => (stream ? undefined : reject(e)));
      res.on("end", done);
    });
    req.end(init.body);
  });
}

/** An answer that streams (GET /__sandbox/events): readers stop after its first chunk. */
export function isEventStream(contentType: string | null | undefined): boolean {
  return (contentType ?? "").startsWith("text/event-stream");
}

/** The first chunk of a streaming answer, then the stream is cancelled: a probe stays bounded. */
async function firstChunk(res: Response): Promise<string> {
  if (res.body === null) return ""; // a HEAD
  const reader = res.body.getReader();
  const chunk = await reader.read();
  await reader.cancel();
  return chunk.done ? "" : new TextDecoder().decode(chunk.value);
}

/**
 * Writes header lines byte for byte on a raw socket (no client normalises them: a trailing space
 * stays, a header can repeat) and parses the answer.
 */
export function rawGet(srv: TestServer, path: string, headerLines: string[]): Promise<Reply> {
  return rawRequest(srv, "GET", path, headerLines);
}

/** rawGet with any method (HEAD included: the reply's text is then whatever followed the headers). */
export function rawRequest(srv: TestServer, method: string, path: string, headerLines: string[] = []): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect(srv.server.port, srv.server.host);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const split = raw.indexOf("\r\n\r\n");
      const head = raw.slice(0, split).split("\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0]!)?.[1]);
      const pairs = head.slice(1).map((line): [string, string] => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
      });
      resolve(toReply(status, pairs, raw.slice(split + 4)));
    });
    socket.write([`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${srv.server.port}`, ...headerLines, "Connection: close", "", ""].join("\r\n"));
  });
}

/** What POST /__sandbox/sessions answers, and one of its merchants: the server's own types. */
export type SessionAnswer = SessionInfo;
export type SessionMerchant = SessionInfo["merchant"];

/** A session of `scenario` (the default one when none is named), created over the control API. */
export async function createSession(t: TestServer, scenario?: string): Promise<SessionAnswer> {
  const r = await t.call("/__sandbox/sessions", postJson(scenario ? { scenario } : {}));
  expect(r.status, r.text).toBe(201);
  return r.json as SessionAnswer;
}
