import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, startCliServer, type CliProcess } from "../support/cli.js";
import { requestWithRepeatedHeaders } from "../support/server.js";

/**
 * `serve` and the control plane's guards, through the real binary: admin tokens that would leave it
 * open or guessable stop the start, an exposed sandbox without one says so once, and
 * --allowed-hosts (or MERCHANT_SANDBOX_ALLOWED_HOSTS) adds the names it answers to. Issue 10 §3.
 */

const running: CliProcess[] = [];
afterAll(() => {
  for (const cli of running) cli.child.kill("SIGKILL");
});
async function serve(args: string[], env: Record<string, string> = {}) {
  const cli = await startCliServer(args, env);
  running.push(cli);
  return cli;
}

const FIX = "Use a random one, e.g. from `openssl rand -hex 16`, or leave the option out to run without one on a loopback address.";
const HELP = "Run 'merchant-sandbox serve --help' for the options.";

describe("serve: the admin token", () => {
  it.each([
    [
      "regression: --admin-token '' is a start error, not an open control plane",
      ["--admin-token", ""],
      {},
      `--admin-token is empty: it would leave the control plane open to anyone while looking set. ${FIX}`,
    ],
    [
      "regression: MERCHANT_SANDBOX_ADMIN_TOKEN='' is a start error too, naming the variable (the user typed no flag)",
      [],
      { MERCHANT_SANDBOX_ADMIN_TOKEN: "" },
      `MERCHANT_SANDBOX_ADMIN_TOKEN is empty: it would leave the control plane open to anyone while looking set. ${FIX}`,
    ],
    [
      "regression: a one-character --admin-token is a start error that says why",
      ["--admin-token", "x"],
      {},
      `--admin-token must be at least 16 characters, got 1: a short token can be guessed by a web page or a neighbour on the network trying tokens. ${FIX}`,
    ],
    [
      "regression: a 15-character --admin-token is a start error",
      ["--admin-token", "fifteen-chars-x"],
      {},
      `--admin-token must be at least 16 characters, got 15: a short token can be guessed by a web page or a neighbour on the network trying tokens. ${FIX}`,
    ],
  ])("%s", async (_name, args, env, message) => {
    const cli = runCli(["serve", "--port", "0", ...args], env);
    running.push(cli); // killed after the tests should it start after all
    expect(await cli.exited).toBe(2);
    expect(cli.stdout()).toBe("");
    expect(cli.stderr()).toBe(`merchant-sandbox: ${message}\n${HELP}\n`);
  });
});

describe("serve: the start warning", () => {
  const RISK =
    "merchant-sandbox: warning: listening on 0.0.0.0 with no --admin-token: anyone who can reach this address can reset the sandbox and read every session's credentials";
  // The container marker (`container`, set by the image's Dockerfile) left empty: the machine running the tests may be one.
  const NOT_IN_A_CONTAINER = { container: "" };

  it("regression: bound to 0.0.0.0 with no admin token, exactly one warning line on stderr", async () => {
    const cli = await serve(["--host", "0.0.0.0"], NOT_IN_A_CONTAINER);
    expect((await fetch(`${cli.url}/__sandbox/health`)).status).toBe(200);
    expect(cli.stderr()).toBe(`${RISK}; set --admin-token (MERCHANT_SANDBOX_ADMIN_TOKEN), or bind 127.0.0.1\n`);
  });

  it("advice that fits where it runs: in a container (the image), publish the port on 127.0.0.1, never 'bind 127.0.0.1', which would break -p", async () => {
    const cli = await serve(["--host", "0.0.0.0"], { container: "docker" });
    expect((await fetch(`${cli.url}/__sandbox/health`)).status).toBe(200);
    const port = new URL(cli.url).port;
    expect(cli.stderr()).toBe(
      `${RISK}; in a container, publish the port on this machine's loopback only (docker run -p 127.0.0.1:${port}:${port}), or set --admin-token (MERCHANT_SANDBOX_ADMIN_TOKEN)\n`,
    );
  });

  it("the image sets the container marker the warning reads", () => {
    const dockerfile = readFileSync(fileURLToPath(new URL("../../Dockerfile", import.meta.url)), "utf8");
    const runtime = dockerfile.slice(dockerfile.indexOf("AS runtime"));
    expect(runtime).toMatch(/^ENV (?:[^\n]*\\\n)*\s*container=docker\b/m);
  });

  it("says nothing with an admin token, on loopback, or with the control plane off", async () => {
    const quiet = await Promise.all([
      serve(["--host", "0.0.0.0", "--admin-token", "a-long-enough-admin-token"]),
      serve(["--host", "127.0.0.1"]),
      serve(["--host", "0.0.0.0", "--no-control-plane"]),
    ]);
    for (const cli of quiet) {
      expect((await fetch(`${cli.url}/__sandbox/health`)).status).toBe(200);
      expect(cli.stderr()).toBe("");
    }
  });
});

describe("serve --allowed-hosts", () => {
  const refused = (host: string, name: string) =>
    `The control plane does not answer to Host '${host}': a web page can point a name it owns at this machine (DNS rebinding) and read every session's secrets through it. Call the sandbox by localhost, an IP address or a single-label name (a docker or CI service name such as 'sandbox'), or allow this name with --allowed-hosts ${name} (MERCHANT_SANDBOX_ALLOWED_HOSTS, createSandbox({ allowedHosts })).`;

  it("adds names (exact or .domain) to localhost, IPs and service names; the flag and the variable alike", async () => {
    const [byFlag, byEnv] = await Promise.all([
      serve(["--allowed-hosts", "sandbox.ci.example, .svc.cluster.local"]),
      serve([], { MERCHANT_SANDBOX_ALLOWED_HOSTS: "sandbox.ci.example,.svc.cluster.local" }),
    ]);
    for (const cli of [byFlag, byEnv]) {
      for (const host of ["sandbox.ci.example:4010", "sandbox.ns.svc.cluster.local", "localhost:4010", "sandbox", "10.1.2.3"]) {
        expect((await requestWithRepeatedHeaders(cli.url, "/__sandbox/sessions", { host })).status, host).toBe(200);
      }
      const r = await requestWithRepeatedHeaders(cli.url, "/__sandbox/sessions", { host: "attacker.example" });
      expect(r.status).toBe(403);
      expect(r.json.detail).toBe(refused("attacker.example", "attacker.example"));
    }
  });

  it("refuses an entry that is no host name at start, saying how to write one", async () => {
    const cli = runCli(["serve", "--port", "0", "--allowed-hosts", "http://sandbox.ci.example:4010"]);
    running.push(cli);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(
      `merchant-sandbox: --allowed-hosts entry 'http://sandbox.ci.example:4010' is not a host name: write the name alone, without scheme or port (sandbox.ci.example), '.example.test' for a name and every name under it, or '*' for any host (unsafe: it lets web pages in through DNS rebinding)\n${HELP}\n`,
    );
  });
});
