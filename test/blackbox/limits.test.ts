import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/adapters/node-http.js";
import { testSandbox } from "../support/keys.js";
import { runCli, startCliServer, type CliProcess } from "../support/cli.js";
import { openEventStream } from "../support/event-stream.js";
import { DEFAULT_KEY, DEFAULT_SECRET, T0, postJson, problem } from "../support/server.js";

/**
 * The server's limits: each a setting with a safe default, each refusal a problem+json that says
 * which limit and how to stay under it, and a socket closed after it (a slow or oversized client
 * never pins one).
 */

interface RawReply {
  status: number;
  headers: Record<string, string>;
  /** The parsed JSON body, compared whole. */
  body: unknown;
}

/** Sends raw bytes (and optionally stops mid-request) and reads the whole answer until close. */
function raw(port: number, bytes: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let data = "";
    socket.setEncoding("utf8").on("data", (d: string) => (data += d));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head, ...rest] = data.split("\r\n\r\n");
      const [statusLine, ...lines] = head!.split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(rest.join("\r\n\r\n")) });
    });
  });
}

let running: RunningServer | undefined;
let cli: CliProcess | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  cli?.child.kill();
  cli = undefined;
});

/** A refusal the server made itself: exact status and body, problem+json, not cached, connection closed. */
function expectServerRefusal(r: RawReply, expected: ReturnType<typeof problem>): void {
  expect(r.status).toBe(expected.status);
  expect(r.headers).toMatchObject({ "content-type": "application/problem+json", "cache-control": "no-store", connection: "close" });
  expect(r.body).toEqual(expected);
}

const headersTooLarge = (limit: number) =>
  problem(
    431,
    "Request Header Fields Too Large",
    "headers_too_large",
    `The request's headers are larger than this sandbox accepts (${limit} bytes in all). Send shorter headers: an access token is under 2 KB, so an oversized Authorization or Cookie header is the usual cause (the limit is serve --max-header-bytes).`,
    "/",
    "invalid_request",
  );

const tooManyHeaders = (limit: number, path = "/api/v2/payment/p_1") =>
  problem(
    431,
    "Request Header Fields Too Large",
    "headers_too_many",
    `The request has more than ${limit} header fields, the most this sandbox accepts. Send only the headers the request needs (the limit is serve --max-headers).`,
    path,
    "invalid_request",
  );

/**
 * A GET with Host, Connection: close (so the answer ends with the socket) and then `fields` more
 * header lines: `fields + 2` in all.
 */
function getWithFields(path: string, fields: string[]): string {
  return `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n`;
}

/** n one-byte fields, all named `a`: a repeated field counts once per line. */
const filler = (n: number): string[] => Array.from({ length: n }, () => "a:1");

const TIMED_OUT = problem(
  408,
  "Request Timeout",
  "request_timeout",
  "The request was not completed in time. Send the headers and body without pausing.",
  "/",
  "invalid_request",
);

async function serverWith(options: Parameters<typeof startServer>[1]): Promise<RunningServer> {
  running = await startServer(await testSandbox({ frozenAt: T0 }), { port: 0, ...options });
  return running;
}

describe("header size limit", () => {
  it("a header section over the configured limit gets 431 problem+json naming the limit, and the connection closes", async () => {
    const server = await serverWith({ maxHeaderBytes: 4096 });
    expectServerRefusal(
      await raw(server.port, `GET /api/v2/payment/p_1 HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(5000)}\r\n\r\n`),
      headersTooLarge(4096),
    );
  });

  it("headers just under the limit are served", async () => {
    const server = await serverWith({ maxHeaderBytes: 4096 });
    const res = await fetch(`${server.url}/__sandbox/health`, { headers: { "x-pad": "a".repeat(3000) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", version: "0.1.0", scenarios: ["default"] });
  });
});

describe("header count limit", () => {
  it("regression: a second Authorization past node's 2000th header went unseen (200); now 431 headers_too_many", async () => {
    const server = await serverWith({});
    const exchange = await fetch(`${server.url}/api/v2/auth/token`, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
    const token = ((await exchange.json()) as { access_token: string }).access_token;
    // 2,100 one-byte fields keep the section under 16 KB, so only the count can refuse it.
    const request = getWithFields("/api/v2/payment/p_1", [`Authorization: Bearer ${token}`, ...filler(2100), "Authorization: Bearer forged"]);
    expect(Buffer.byteLength(request)).toBeLessThan(16 * 1024);
    expectServerRefusal(await raw(server.port, request), tooManyHeaders(100));
  });

  it("the default is 100 fields, Host included: 100 are served, 101 get 431 naming the limit", async () => {
    const server = await serverWith({});
    expect((await raw(server.port, getWithFields("/__sandbox/health", filler(98)))).status).toBe(200);
    expectServerRefusal(await raw(server.port, getWithFields("/api/v2/payment/p_1", filler(99))), tooManyHeaders(100));
  });

  it("maxHeaders sets it: 40 are served, 41 refused (the instance is the request's path)", async () => {
    const server = await serverWith({ maxHeaders: 40 });
    expect((await raw(server.port, getWithFields("/__sandbox/health", filler(38)))).status).toBe(200);
    expectServerRefusal(await raw(server.port, getWithFields("/__sandbox/health", filler(39))), tooManyHeaders(40, "/__sandbox/health"));
  });

  it("a repeated field counts once per line (two Authorization lines are two fields)", async () => {
    const server = await serverWith({ maxHeaders: 40 });
    expectServerRefusal(
      await raw(server.port, getWithFields("/api/v2/payment/p_1", [...filler(37), "Authorization: Bearer a", "Authorization: Bearer b"])),
      tooManyHeaders(40),
    );
  });

  it("startServer refuses a maxHeaders that is not a whole number of at least 1", async () => {
    const sandbox = await testSandbox({ frozenAt: T0 });
    await expect(startServer(sandbox, { port: 0, maxHeaders: 0 })).rejects.toThrow("maxHeaders must be a whole number of at least 1, got 0");
  });
});

describe("timeouts", () => {
  it("a client that stops in the middle of its headers gets 408 problem+json and its socket is closed", async () => {
    const server = await serverWith({ headersTimeoutMs: 1000, requestTimeoutMs: 1000 });
    expectServerRefusal(await raw(server.port, "GET /api/v2/payment/p_1 HTTP/1.1\r\nHost: x\r\nAuthoriz"), TIMED_OUT);
  });

  it("a client that stops in the middle of its body gets 408 too", async () => {
    const server = await serverWith({ headersTimeoutMs: 1000, requestTimeoutMs: 1000 });
    const partial = `POST /api/v2/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"api_key":`;
    expectServerRefusal(await raw(server.port, partial), TIMED_OUT);
  });
});

describe("clients that never read", () => {
  /**
   * A server whose event-stream replay (2,000 entries of about 4.5 KB: paths and queries of
   * backslashes, doubled in JSON) is far more than loopback's socket buffers take: a client that
   * does not read leaves most of it waiting in the server.
   */
  async function serverWithLongReplay(options: Parameters<typeof startServer>[1]): Promise<RunningServer> {
    const sandbox = await testSandbox({ frozenAt: T0, journalSize: 2000, eventBufferSize: 5000 });
    const path = `/${"\\".repeat(1023)}`;
    const query = `q=${"\\".repeat(1022)}`;
    for (let i = 0; i < 2000; i++) await sandbox.handle({ method: "GET", path, query, headers: { host: "127.0.0.1" }, body: new Uint8Array(0) });
    running = await startServer(sandbox, { port: 0, ...options });
    return running;
  }

  /** Opens a stream with a replay and never reads; resolves with the server's side of the connection. */
  function nonReader(server: RunningServer): Promise<{ client: Socket; closed: () => Promise<boolean> }> {
    return new Promise((resolve) => {
      server.server.once("connection", (serverSide: Socket) => {
        const closing = new Promise<boolean>((done) => serverSide.once("close", () => done(true)));
        // Bounds the wait: a connection left open is a failure that says so, not a hang.
        const closed = () => Promise.race([closing, new Promise<boolean>((done) => setTimeout(() => done(false), 20_000).unref())]);
        resolve({ client, closed });
      });
      const client = connect(server.port, "127.0.0.1", () => client.write("GET /__sandbox/events?since=req_0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
      client.on("error", () => {});
      client.pause();
    });
  }

  it("bounded memory: a connection whose answer waits unread writeTimeoutMs is closed; a client that reads gets its answer whole", async () => {
    const server = await serverWithLongReplay({ writeTimeoutMs: 1000 });
    const stalled = await nonReader(server);
    const reader = await openEventStream(`${server.url}/__sandbox/events?since=req_0`);
    const events = await reader.next(2000, 20_000);
    expect([events.length, events[0]!.id, events.at(-1)!.id]).toEqual([2000, "req_1", "req_2000"]);
    reader.close();
    expect(await stalled.closed()).toBe(true);
    stalled.client.destroy();
  }, 30_000);

  it("bounded memory: the connections waiting for their clients hold at most writeBudgetBytes together, past it the longest waiting is closed at once", async () => {
    const server = await serverWithLongReplay({ writeTimeoutMs: 600_000, writeBudgetBytes: 1024 * 1024 });
    const stalled = await nonReader(server);
    expect(await stalled.closed()).toBe(true);
    stalled.client.destroy();
  }, 30_000);

  it("startServer refuses a writeTimeoutMs that is not a whole number of at least 1", async () => {
    const sandbox = await testSandbox({ frozenAt: T0 });
    await expect(startServer(sandbox, { port: 0, writeTimeoutMs: 0 })).rejects.toThrow("writeTimeoutMs must be a whole number of at least 1, got 0");
  });
});

describe("malformed HTTP", () => {
  it("a request line that is not HTTP gets 400 http_malformed problem+json", async () => {
    const server = await serverWith({});
    expectServerRefusal(
      await raw(server.port, "HELLO\r\n\r\n"),
      problem(
        400,
        "Bad Request",
        "http_malformed",
        "The request is not valid HTTP/1.1 (bad request line, header or framing). Check the client's request encoding.",
        "/",
        "invalid_request",
      ),
    );
  });
});

describe("serve flags for the limits", () => {
  it("--max-body-bytes: a body over it gets 413 naming the limit", async () => {
    const server = await startCliServer(["--max-body-bytes", "2048", "--log-format", "off"]);
    cli = server;
    const body = JSON.stringify({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET, pad: "x".repeat(3000) });
    const res = await fetch(`${server.url}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toEqual(
      problem(
        413,
        "Content Too Large",
        "payload_too_large",
        "The request body is larger than 2048 bytes. Send only the fields the endpoint expects.",
        "/api/v2/auth/token",
        "payload_too_large",
      ),
    );
  });

  it("--max-header-bytes: the server refuses larger header sections with 431", async () => {
    const server = await startCliServer(["--max-header-bytes", "2048", "--log-format", "off"]);
    cli = server;
    const r = await raw(Number(new URL(server.url).port), `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(3000)}\r\n\r\n`);
    expectServerRefusal(r, headersTooLarge(2048));
  });

  it.each([
    ["--max-headers 50", ["--max-headers", "50"], {}],
    ["MERCHANT_SANDBOX_MAX_HEADERS=50", [], { MERCHANT_SANDBOX_MAX_HEADERS: "50" }],
  ])("%s: the server refuses more header fields with 431", async (_name, args, env) => {
    const server = await startCliServer([...args, "--log-format", "off"], env);
    cli = server;
    const port = Number(new URL(server.url).port);
    expect((await raw(port, getWithFields("/__sandbox/health", filler(48)))).status).toBe(200);
    expectServerRefusal(await raw(port, getWithFields("/__sandbox/health", filler(49))), tooManyHeaders(50, "/__sandbox/health"));
  });

  const bad: Array<[string[], string]> = [
    [["--max-header-bytes", "10"], "merchant-sandbox: --max-header-bytes must be a whole number of bytes, at least 1024, got '10'"],
    [["--max-headers", "10"], "merchant-sandbox: --max-headers must be a whole number of header fields, at least 32, got '10'"],
    [["--max-headers", "1.5"], "merchant-sandbox: --max-headers must be a whole number of header fields, at least 32, got '1.5'"],
    [["--headers-timeout", "0.5s"], "merchant-sandbox: --headers-timeout must be at least 1s, got '0.5s'"],
    // Unbounded durations: node:http threw a stack trace past 2^53 ms.
    [["--request-timeout", "100000000000h"], "merchant-sandbox: --request-timeout must be at most 1h, got '100000000000h'"],
    [["--session-idle-ttl", "100000000h"], "merchant-sandbox: --session-idle-ttl must be at most 30d, got '100000000h'"],
    [["--leeway", "2d"], "merchant-sandbox: --leeway must be at most 1d, got '2d'"],
    [
      ["--headers-timeout", "40s", "--request-timeout", "30s"],
      "merchant-sandbox: --headers-timeout (40s) cannot be longer than --request-timeout (30s): the headers are part of the request",
    ],
  ];
  for (const [args, message] of bad) {
    it(`serve ${args.join(" ")} exits 2 with: ${message.slice(18)}`, async () => {
      const p = runCli(["serve", "--port", "0", ...args]);
      expect(await p.exited).toBe(2);
      expect(p.stderr().split("\n")[0]).toBe(message);
    });
  }

  it("serve --help lists every limit in one group", async () => {
    const p = runCli(["serve", "--help"]);
    expect(await p.exited).toBe(0);
    const group = p.stdout().split("Limits (a request over one gets a problem+json refusal, never a crash):")[1]!.split("\n\n")[0]!;
    for (const flag of [
      "--journal-size",
      "--max-sessions",
      "--max-body-bytes",
      "--max-header-bytes",
      "--max-headers",
      "--headers-timeout",
      "--request-timeout",
    ]) {
      expect(group).toContain(flag);
    }
  });
});
