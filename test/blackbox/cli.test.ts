import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCliServer, untilPrinted, type CliProcess } from "../support/cli.js";

/** The real binary as a child process: start, probe, configure, stop. */

const tokenRequest = {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),
};

describe("merchant-sandbox serve", () => {
  let cli: CliProcess & { url: string };
  beforeAll(async () => {
    cli = await startCliServer();
  });
  afterAll(() => {
    cli.child.kill("SIGKILL");
  });

  it("prints its URL and the loaded merchants' api_keys on start, and no secret", () => {
    expect(cli.stdout()).toMatch(
      /^merchant-sandbox \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+ scenarios=default profile=oauth merchants=sandbox-api-key alg=RS256 token_ttl=3600s\n/,
    );
    expect(cli.stdout()).not.toContain("sandbox-api-secret");
    expect(cli.stdout()).not.toContain("sandbox-payment-token");
  });

  it("the active profile is visible: the start line names the response profile it answers in (serve --profile lexik: lexik)", async () => {
    const lexik = await startCliServer(["--profile", "lexik"]);
    try {
      expect(lexik.stdout()).toMatch(
        /^merchant-sandbox \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+ scenarios=default profile=lexik merchants=sandbox-api-key alg=RS256 token_ttl=3600s\n/,
      );
    } finally {
      lexik.child.kill("SIGKILL");
    }
  });

  it("answers the health check", async () => {
    const res = await fetch(`${cli.url}/__sandbox/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", version: expect.stringMatching(/^\d+\.\d+\.\d+$/), scenarios: ["default"] });
  });

  it("runs the README flow: token, protected call, payment/init", async () => {
    const token = (await (await fetch(`${cli.url}/api/v2/auth/token`, tokenRequest)).json()).access_token;
    const payment = await fetch(`${cli.url}/api/v2/payment/anything`, { headers: { authorization: `Bearer ${token}` } });
    expect(payment.status).toBe(200);
    const init = await fetch(`${cli.url}/api/v2/payment/init`, {
      method: "POST",
      headers: { authorization: "Bearer sandbox-payment-token", "content-type": "application/x-www-form-urlencoded" },
      body: "{}",
    });
    expect(init.status).toBe(201);
  });

  it("signs tokens that verify with the key set it publishes at /.well-known/jwks.json (RS256, the default)", async () => {
    await expectServedTokensVerify(cli.url, "RS256");
  });

  it("logs one text line per request with method, path, status, duration and merchant", async () => {
    const tokenLineCount = (out: string) => out.match(/ POST \/api\/v2\/auth\/token .*\n/g)?.length ?? 0;
    const before = tokenLineCount(cli.stdout());
    await fetch(`${cli.url}/api/v2/auth/token`, tokenRequest);
    await untilPrinted(cli, (out) => tokenLineCount(out) > before);
    const lines = cli.stdout().trim().split("\n");
    const tokenLines = lines.filter((l) => l.includes(" POST /api/v2/auth/token "));
    expect(tokenLines.at(-1)).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z POST \/api\/v2\/auth\/token 200 \d+\.\dms merchant=merchant_sandbox_default jti=[0-9a-f-]{36}$/,
    );
  });
});

/**
 * Several tokens from the served exchange, each verified with jose against the served JWKS, as a
 * client library would: the bundled CLI signs on another thread for RS256 and inline for ES256.
 */
async function expectServedTokensVerify(url: string, alg: "RS256" | "ES256"): Promise<void> {
  const jwks = createLocalJWKSet(await (await fetch(`${url}/.well-known/jwks.json`)).json());
  const bodies = await Promise.all(Array.from({ length: 8 }, async () => (await fetch(`${url}/api/v2/auth/token`, tokenRequest)).json()));
  for (const { access_token: token } of bodies) {
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { algorithms: [alg], audience: "merchant-api" });
    expect(protectedHeader).toEqual({ alg, kid: expect.any(String), typ: "at+jwt" });
    expect(payload.sub).toBe("merchant_sandbox_default");
  }
  expect(new Set(bodies.map((b) => b.access_token)).size).toBe(bodies.length);
}

describe("merchant-sandbox serve: configuration", () => {
  it("--alg ES256: served tokens verify with the served JWKS", async () => {
    const cli = await startCliServer(["--alg", "ES256"]);
    try {
      await expectServedTokensVerify(cli.url, "ES256");
    } finally {
      cli.child.kill("SIGKILL");
    }
  });

  it("takes every flag as an environment variable too (MERCHANT_SANDBOX_TOKEN_TTL)", async () => {
    const cli = await startCliServer([], { MERCHANT_SANDBOX_TOKEN_TTL: "60s", MERCHANT_SANDBOX_ALG: "ES256" });
    try {
      const body = await (await fetch(`${cli.url}/api/v2/auth/token`, tokenRequest)).json();
      expect(body.expires_in).toBe(60);
      expect(JSON.parse(Buffer.from(body.access_token.split(".")[0], "base64url").toString()).alg).toBe("ES256");
    } finally {
      cli.child.kill("SIGKILL");
    }
  });

  it("writes JSON log lines with --log-format json", async () => {
    const cli = await startCliServer(["--log-format", "json"]);
    try {
      await fetch(`${cli.url}/api/v2/payment/x`);
      await untilPrinted(cli, (out) => /"msg":"request".*\n/.test(out));
      const lines = cli
        .stdout()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines[0]).toMatchObject({ level: "info", msg: expect.stringMatching(/listening on/), merchants: ["sandbox-api-key"] });
      expect(lines[1]).toMatchObject({
        level: "info",
        msg: "request",
        method: "GET",
        path: "/api/v2/payment/x",
        query: "",
        status: 401,
        endpoint: "payment",
        code: "credentials_missing",
      });
      expect(typeof lines[1].durationMs).toBe("number");
    } finally {
      cli.child.kill("SIGKILL");
    }
  });

  it.each([
    [
      ["--token-ttl", "soon"],
      "merchant-sandbox: --token-ttl 'soon' is not a duration; write it like 90s, 59m, 1h, 1h30m, 500ms or a number of seconds",
    ],
    [["--alg", "HS512"], 'merchant-sandbox: Invalid values: Argument: alg, Given: "HS512", Choices: "RS256", "ES256", "HS256"'],
    [["--port", "70000"], "merchant-sandbox: --port must be a TCP port number, a whole number from 0 to 65535 (0 picks a free one), got '70000'"],
    [
      ["--payment-token-transport", "cookie"],
      "merchant-sandbox: --payment-token-transport 'cookie' is not understood; write 'authorization', 'header:<Header-Name>' or 'body:<json_field>'",
    ],
    [["--signing-key", "not a key"], "merchant-sandbox: the signing key is not a usable RS256 private key"],
    [["--bogus"], "merchant-sandbox: Unknown argument: bogus"],
  ])("refuses %j with one clear line and exit code 2", async (args, message) => {
    // No server starts: each refusal comes before the port is bound.
    const cli = runCli(["serve", ...args]);
    expect(await cli.exited).toBe(2);
    const [first, second, ...rest] = cli.stderr().split("\n");
    expect(first!.startsWith(message)).toBe(true);
    expect(second).toBe("Run 'merchant-sandbox serve --help' for the options.");
    expect(rest.join("")).toBe("");
    expect(cli.stdout()).toBe("");
  });

  describe("refuses an RSA signing key under 2048 bits, which jose would not verify with", () => {
    const message =
      "merchant-sandbox: the signing key is an RSA key of 1024 bits; RS256 needs an RSA key of 2048 bits or more (RFC 7518 §3.3): generate one with `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`";
    const pem = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "ms-rsa1024-"));
      writeFileSync(join(dir, "rsa1024.pem"), pem);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it.each([
      ["from a file (@path)", () => runCli(["serve", "--signing-key", `@${join(dir, "rsa1024.pem")}`])],
      // Written --signing-key=<pem>: a separate argument starting with "-----" reads as flags to yargs.
      ["given inline", () => runCli(["serve", `--signing-key=${pem}`])],
      ["from MERCHANT_SANDBOX_SIGNING_KEY", () => runCli(["serve"], { MERCHANT_SANDBOX_SIGNING_KEY: pem })],
    ])("%s: one clear line and exit code 2", async (_how, start) => {
      const cli = start();
      expect(await cli.exited).toBe(2);
      const [first, second, ...rest] = cli.stderr().split("\n");
      expect(first).toBe(message);
      expect(second).toBe("Run 'merchant-sandbox serve --help' for the options.");
      expect(rest.join("")).toBe("");
      expect(cli.stdout()).toBe("");
    });
  });

  it("explains itself with --help", async () => {
    const cli = runCli(["serve", "--help"]);
    expect(await cli.exited).toBe(0);
    for (const flag of ["--port", "--host", "--token-ttl", "--alg", "--issuer", "--seed", "--login-mode", "--log-format"]) {
      expect(cli.stdout()).toContain(flag);
    }
  });

  it("asks for a command when run without one", async () => {
    const cli = runCli([]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain("Name a command: merchant-sandbox serve starts the sandbox");
  });
});

describe("merchant-sandbox serve: lifecycle", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("stops cleanly on %s, answering the request in flight", async (signal) => {
    const cli = await startCliServer();
    // A request whose body is still arriving when the signal comes must still get its answer.
    const { request } = await import("node:http");
    const answered = new Promise<number>((resolve, reject) => {
      const req = request(`${cli.url}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
      req.write('{"api_key":"sandbox-api-key",');
      setTimeout(() => {
        cli.child.kill(signal);
        setTimeout(() => req.end('"api_secret":"sandbox-api-secret"}'), 50);
      }, 50);
    });
    expect(await answered).toBe(200);
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toContain(`received ${signal}, stopping`);
  });

  it("survives garbage on the socket and a client that disconnects mid-request", async () => {
    const cli = await startCliServer();
    try {
      const { connect } = await import("node:net");
      const port = Number(new URL(cli.url).port);
      const garbage = await new Promise<string>((resolve) => {
        const s = connect(port, "127.0.0.1", () => s.write("\x00\x01GARBAGE / HTTP/9\r\n\r\n"));
        let data = "";
        s.on("data", (d) => (data += d));
        s.on("close", () => resolve(data));
      });
      expect(garbage).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      await new Promise<void>((resolve) => {
        const s = connect(port, "127.0.0.1", () => {
          s.write('POST /api/v2/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"api_');
          s.destroy();
          resolve();
        });
      });
      const res = await fetch(`${cli.url}/__sandbox/health`);
      expect(res.status).toBe(200);
      expect(cli.stderr()).toBe("");
    } finally {
      cli.child.kill("SIGKILL");
    }
  });
});
