import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { optionNames } from "../../src/cli/env.js";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { runCli, runCliToEnd, startCliServer } from "../support/cli.js";
import { freePort } from "../support/free-port.js";

/**
 * The CLI's rough edges, each answered with one line that says what is wrong and how to fix it:
 * a port in use, a mistyped flag, the environment variables in --help, a PEM given as a separate
 * argument.
 */

describe("serve on a port in use", () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it("names the process that holds the port and how to get another, exit 1", async () => {
    const cli = runCli(["serve", "--port", String(port)]);
    expect(await cli.exited).toBe(1);
    // This test's own process holds it (a real listener); on Linux its id and name are found in /proc.
    const name = readFileSync("/proc/self/comm", "utf8").trim();
    expect(cli.stderr()).toBe(
      `merchant-sandbox: cannot listen on 127.0.0.1:${port}: the port is already in use, process ${process.pid} (${name}) listens on it; stop that process, pass another --port, or --port 0 for any free port\n`,
    );
    expect(cli.stdout()).toBe("");
  });
});

describe("variables are flags by their own names, never by a short alias", () => {
  it("MERCHANT_SANDBOX_P is no variable: warned about, with the one meant, and not read as --port", async () => {
    // -p's port is one this test holds: read as --port, the start would fail with "already in use".
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const held = (holder.address() as { port: number }).port;
    const cli = runCli(["serve", "--log-format", "off"], { MERCHANT_SANDBOX_PORT: "0", MERCHANT_SANDBOX_P: String(held) });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        cli.child.stdout!.on("data", () => {
          const m = /listening on (http:\/\/\S+)/.exec(cli.stdout());
          if (m) resolve(m[1]!);
        });
        void cli.exited.then((code) => reject(new Error(`serve exited ${code}: ${cli.stderr()}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url).not.toBe(`http://127.0.0.1:${held}`);
      expect(cli.stderr()).toBe(
        "merchant-sandbox: ignoring MERCHANT_SANDBOX_P: it is not a setting of any command; did you mean 'MERCHANT_SANDBOX_PORT'? (-p is --port on the command line only)\n",
      );
    } finally {
      cli.child.kill();
      await cli.exited;
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});

describe("a start the network stops is no usage error", () => {
  it("--require-state with a Redis that refuses the connection: 'cannot start', exit 3, no --help line", async () => {
    const port = await freePort();
    const run = await runCliToEnd(["serve", "--port", "0", "--state", `redis://127.0.0.1:${port}`, "--require-state"]);
    expect([run.code, run.stdout, run.stderr]).toEqual([
      3,
      "",
      `merchant-sandbox: cannot start: The state store redis://127.0.0.1:${port}/0 is unavailable: sync failed, not connected (the last connection error: connect ECONNREFUSED 127.0.0.1:${port}). Start Redis there or fix --state; without --require-state the replica would start unhealthy and wait for it.\n`,
    ]);
  });
});

describe("a mistyped flag gets the closest flag of its command", () => {
  it.each([
    [["serve", "--prot", "4011"], "merchant-sandbox: Unknown argument: prot; did you mean '--port'?"],
    [["serve", "--tokn-ttl", "60s"], "merchant-sandbox: Unknown argument: tokn-ttl; did you mean '--token-ttl'?"],
    [
      ["serve", "--prot", "4011", "--hots", "0.0.0.0"],
      "merchant-sandbox: Unknown arguments: prot, hots; did you mean '--port' for 'prot', '--host' for 'hots'?",
    ],
    [["report", "--url", "http://127.0.0.1:1", "--sesion", "s1"], "merchant-sandbox: Unknown argument: sesion; did you mean '--session'?"],
    [
      ["scan-logs", "--url", "http://127.0.0.1:1", "--admin-tokne", "t", "x.log"],
      "merchant-sandbox: Unknown argument: admin-tokne; did you mean '--admin-token'?",
    ],
    [["serv"], "merchant-sandbox: Unknown argument: serv; did you mean the command 'serve'?"],
    // Nothing close: the message stays as it was.
    [["serve", "--bogus"], "merchant-sandbox: Unknown argument: bogus"],
  ])("%j: one line, exit 2", async (args, line) => {
    const cli = runCli(args);
    expect(await cli.exited).toBe(2);
    const command = ["serve", "report", "scan-logs"].includes(args[0]!) ? `${args[0]} ` : "";
    expect(cli.stderr()).toBe(`${line}\nRun 'merchant-sandbox ${command}--help' for the options.\n`);
    expect(cli.stdout()).toBe("");
  });
});

describe("usage errors in the terms the user gave: what a value must be, the variable or flag it came from, the command's own --help", () => {
  const PORT = "must be a TCP port number, a whole number from 0 to 65535 (0 picks a free one), got";
  it.each([
    ["--port abc says what a port is and quotes it (not 'NaN')", ["serve", "--port", "abc"], {}, `--port ${PORT} 'abc'`, "serve"],
    ["-p abc alike", ["serve", "-p", "abc"], {}, `--port ${PORT} 'abc'`, "serve"],
    ["the text as given, $& and all (no replacement pattern)", ["serve", "--port=$&x"], {}, `--port ${PORT} '$&x'`, "serve"],
    [
      "a bad value from a variable names the variable, not a flag never typed",
      ["serve"],
      { MERCHANT_SANDBOX_PORT: "abc" },
      `MERCHANT_SANDBOX_PORT ${PORT} 'abc'`,
      "serve",
    ],
    [
      "a flag typed wins over its variable, and is the one named",
      ["serve", "--port", "x"],
      { MERCHANT_SANDBOX_PORT: "4011" },
      `--port ${PORT} 'x'`,
      "serve",
    ],
    [
      "a duration from a variable",
      ["serve"],
      { MERCHANT_SANDBOX_TOKEN_TTL: "forever" },
      "MERCHANT_SANDBOX_TOKEN_TTL 'forever' is not a duration; write it like 90s, 59m, 1h, 1h30m, 500ms or a number of seconds",
      "serve",
    ],
    [
      "a byte count from a variable",
      ["serve"],
      { MERCHANT_SANDBOX_MAX_HEADER_BYTES: "lots" },
      "MERCHANT_SANDBOX_MAX_HEADER_BYTES must be a whole number of bytes, at least 1024, got 'lots'",
      "serve",
    ],
    [
      "a value outside the choices, from a variable (yargs' own message)",
      ["serve"],
      { MERCHANT_SANDBOX_ALG: "XX" },
      'Invalid values: Argument: MERCHANT_SANDBOX_ALG, Given: "XX", Choices: "RS256", "ES256", "HS256"',
      "serve",
    ],
    [
      "a check of another command, from a variable",
      ["scan-logs", "--url", "http://127.0.0.1:1", "x.log"],
      { MERCHANT_SANDBOX_MAX_BYTES: "abc" },
      "MERCHANT_SANDBOX_MAX_BYTES must be a whole number of bytes, at least 1 (got 'abc').",
      "scan-logs",
    ],
    ["a missing flag of report points to report --help", ["report"], {}, "Missing required argument: url", "report"],
    ["no command: the program's --help", [], {}, "Name a command: merchant-sandbox serve starts the sandbox on http://127.0.0.1:4010.", undefined],
  ])("%s", async (_name, args, env, message, command) => {
    const cli = runCli(args, env);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(`merchant-sandbox: ${message}\nRun 'merchant-sandbox ${command ? `${command} ` : ""}--help' for the options.\n`);
    expect(cli.stdout()).toBe("");
  });
});

describe("a sandbox URL from MERCHANT_SANDBOX_URL", () => {
  it("report names the variable when its value is not an http(s) URL, exit 2", async () => {
    const cli = runCli(["report"], { MERCHANT_SANDBOX_URL: "ftp://localhost:4010" });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe("merchant-sandbox: MERCHANT_SANDBOX_URL must be an http:// or https:// URL, e.g. http://localhost:4010 (got 'ftp:')\n");
  });
});

describe("serve --help", () => {
  it("shows each flag's environment variable, under the flag", async () => {
    const cli = runCli(["serve", "--help"]);
    expect(await cli.exited).toBe(0);
    const help = cli.stdout();
    // Every flag serve declares, aliases (-p) and the global --help/--version aside.
    const flags = [...optionNames(serveCommand(undefined) as never)].filter((f) => f.length > 1 && f !== "help" && f !== "version");
    expect(flags.length).toBeGreaterThan(30);
    for (const flag of flags) {
      const at = help.search(new RegExp(`--${flag}\\s`));
      expect(at, `--${flag} in the help`).toBeGreaterThan(-1);
      const env = `MERCHANT_SANDBOX_${flag.toUpperCase().replaceAll("-", "_")}`;
      expect(/\[env: ([A-Z0-9_]+)\]/.exec(help.slice(at))?.[1], `--${flag}`).toBe(env);
    }
  });
});

describe("--signing-key with the PEM as a separate argument", () => {
  const pem = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;

  it("is read as the key (yargs alone read the PEM's '-----BEGIN' as flags)", async () => {
    const cli = await startCliServer(["--signing-key", pem]);
    try {
      const jwks = await (await fetch(`${cli.url}/.well-known/jwks.json`)).json();
      const { n } = createPublicKey(pem).export({ format: "jwk" });
      expect(jwks.keys.map((k: { n: string }) => k.n)).toEqual([n]);
    } finally {
      cli.child.kill("SIGKILL");
    }
  });
});
