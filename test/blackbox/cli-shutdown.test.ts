import { Agent, request, type IncomingMessage } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runCli, startCliServer, type CliProcess } from "../support/cli.js";

/**
 * Stopping `serve` with requests in flight, through the real binary: SIGTERM/SIGINT stop accepting
 * at once, answer what is in flight up to --shutdown-grace, close idle keep-alive connections, and
 * a second signal stops at once. The requests in flight are token exchanges of a scenario whose
 * rule delays them: the delay is real time (the point is requests still being answered), kept short.
 */

const DELAY_MS = 1500;
const SLOW = { api_key: "slow-shutdown-key", api_secret: "slow-shutdown-secret" };
const dir = mkdtempSync(join(tmpdir(), "sandbox-shutdown-"));
const scenarioFile = join(dir, "slow.yaml");
writeFileSync(
  scenarioFile,
  [
    "name: slow-for-shutdown",
    "description: Every token exchange is slow, so a shutdown has requests in flight.",
    "merchants:",
    "  - id: m_slow_shutdown",
    `    api_key: ${SLOW.api_key}`,
    `    api_secret: ${SLOW.api_secret}`,
    "    payment_token: slow-shutdown-payment-token",
    "rules:",
    "  - name: slow",
    "    match: { endpoint: token }",
    `    then: { delay: ${DELAY_MS}ms }`,
    "",
  ].join("\n"),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const started: CliProcess[] = [];
afterEach(() => {
  for (const cli of started.splice(0)) cli.child.kill("SIGKILL");
});

async function serve(args: string[] = []): Promise<CliProcess & { url: string }> {
  const cli = await startCliServer(["--scenario", scenarioFile, ...args]);
  started.push(cli);
  return cli;
}

interface Answer {
  status: number;
  body: string;
  connection: string | undefined;
}

/** A slow token exchange on its own connection: resolves with the answer, or the error that cut it. */
function slowExchange(url: string): { answer: Promise<Answer | { error: string }>; sent: Promise<void> } {
  let sentResolve!: () => void;
  const sent = new Promise<void>((resolve) => (sentResolve = resolve));
  const answer = new Promise<Answer | { error: string }>((resolve) => {
    const req = request(`${url}/api/v2/auth/token`, { method: "POST", agent: false, headers: { "content-type": "application/json" } });
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.on("response", (res: IncomingMessage) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
      res.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    });
    req.end(JSON.stringify(SLOW), sentResolve);
  });
  return { answer, sent };
}

/**
 * Resolves once the server has read what was sent before: a round trip on another connection is
 * answered after the earlier connections' bytes were taken in, so they are requests in flight.
 * A connection of its own (agent: false), closed after: fetch would keep it for a later request.
 */
function roundTrip(url: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request(`${url}/__sandbox/health`, { agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(`answered ${res.statusCode}`));
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end();
  });
}

/** Resolves when the process has printed a line matching `pattern`. */
function printed(cli: CliProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve) => {
    const look = () => {
      const line = cli
        .stdout()
        .split("\n")
        .find((l) => pattern.test(l));
      if (line === undefined) return false;
      cli.child.stdout!.off("data", look);
      resolve(line);
      return true;
    };
    if (!look()) cli.child.stdout!.on("data", look);
  });
}

describe("merchant-sandbox serve: shutdown with requests in flight", () => {
  it("regression: slow requests in flight at SIGTERM are all answered 200, not cut after 800 ms; new connections are refused at once", async () => {
    const cli = await serve();
    const slow = [slowExchange(cli.url), slowExchange(cli.url), slowExchange(cli.url)];
    await Promise.all(slow.map((s) => s.sent));
    expect(await roundTrip(cli.url)).toBe("answered 200");

    cli.child.kill("SIGTERM");
    expect(await printed(cli, /received SIGTERM/)).toBe("received SIGTERM, stopping: answering 3 requests in flight in_flight=3 grace=10s");
    // Stopped accepting: the listening socket is closed while the three are still being answered.
    expect(await roundTrip(cli.url)).toBe("ECONNREFUSED");

    const answers = await Promise.all(slow.map((s) => s.answer));
    for (const a of answers) {
      expect(a).toMatchObject({ status: 200, connection: "close" });
      expect(JSON.parse((a as Answer).body)).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    }
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toMatch(/\nstopped: 3 requests answered while draining answered=3 cut=0 drain_ms=\d+\n$/);
    expect(cli.stderr()).toBe("");
  });

  it("closes an idle keep-alive connection at once, not after the keep-alive timeout, while a slow request is still answered", async () => {
    const cli = await serve();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const idleSocket = await new Promise<import("node:net").Socket>((resolve, reject) => {
      const req = request(`${cli.url}/__sandbox/health`, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(req.socket!));
      });
      req.on("error", reject).end();
    });
    const events: string[] = [];
    const idleClosed = new Promise<void>((resolve) => idleSocket.once("close", () => resolve(void events.push("idle connection closed"))));
    const slow = slowExchange(cli.url);
    await slow.sent;
    expect(await roundTrip(cli.url)).toBe("answered 200");

    cli.child.kill("SIGTERM");
    const answered = slow.answer.then((a) => {
      events.push("slow request answered");
      return a;
    });
    await Promise.all([idleClosed, answered]);
    expect(events).toEqual(["idle connection closed", "slow request answered"]);
    expect(await answered).toMatchObject({ status: 200 });
    expect(await cli.exited).toBe(0);
    agent.destroy();
  });

  it.each([
    ["SIGTERM", "SIGTERM", 143],
    ["SIGTERM", "SIGINT", 130],
    ["SIGINT", "SIGINT", 130],
  ] as const)("regression: a second signal stops at once (%s then %s: exit %i), cutting what is in flight", async (first, second, code) => {
    const cli = await serve();
    const slow = slowExchange(cli.url);
    await slow.sent;
    expect(await roundTrip(cli.url)).toBe("answered 200");

    cli.child.kill(first);
    await printed(cli, new RegExp(`received ${first}, stopping`));
    cli.child.kill(second);
    expect(await cli.exited).toBe(code);
    expect(await slow.answer).toEqual({ error: "ECONNRESET" });
    expect(cli.stdout()).toMatch(new RegExp(`\\nreceived ${second} again, stopping at once cut=1\\n$`));
  });

  it("regression: --shutdown-grace: requests still in flight when it runs out are cut, and the exit code says so (1)", async () => {
    const cli = await serve(["--shutdown-grace", "200ms"]);
    const slow = slowExchange(cli.url);
    await slow.sent;
    expect(await roundTrip(cli.url)).toBe("answered 200");

    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(1);
    expect(await slow.answer).toEqual({ error: "ECONNRESET" });
    expect(cli.stdout()).toContain("\nreceived SIGTERM, stopping: answering 1 request in flight in_flight=1 grace=0.2s\n");
    expect(cli.stdout()).toMatch(/\nstopped: the 0\.2s shutdown grace ran out, 1 request cut answered=0 cut=1 drain_ms=\d+\n$/);
  });

  it("with nothing in flight, stops at once and exits 0; JSON logs carry the same fields", async () => {
    const cli = await serve(["--log-format", "json"]);
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    const lines = cli
      .stdout()
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { level: "info", time: expect.any(String), msg: "received SIGTERM, stopping: answering 0 requests in flight", in_flight: 0, grace: "10s" },
      {
        level: "info",
        time: expect.any(String),
        msg: "stopped: 0 requests answered while draining",
        answered: 0,
        cut: 0,
        drain_ms: expect.any(Number),
      },
    ]);
  });

  it.each([
    [
      ["--shutdown-grace", "soon"],
      {},
      "merchant-sandbox: --shutdown-grace 'soon' is not a duration; write it like 90s, 59m, 1h, 1h30m, 500ms or a number of seconds",
    ],
    [["--shutdown-grace", "2h"], {}, "merchant-sandbox: --shutdown-grace must be at most 1h, got '2h'"],
    [
      [],
      { MERCHANT_SANDBOX_SHUTDOWN_GRACE: "-5s" },
      "merchant-sandbox: MERCHANT_SANDBOX_SHUTDOWN_GRACE '-5s' is not a duration; write it like 90s, 59m, 1h, 1h30m, 500ms or a number of seconds",
    ],
  ])("refuses %j %j at start with one clear line and exit code 2", async (args, env, message) => {
    const cli = runCli(["serve", "--port", "0", ...args], env);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(`${message}\nRun 'merchant-sandbox serve --help' for the options.\n`);
    expect(cli.stdout()).toBe("");
  });
});
