import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runCliMeasured, startCliServer, type CliProcess } from "../support/cli.js";

/**
 * `merchant-sandbox report` and `merchant-sandbox scan-logs`, the real binaries against a real
 * `serve`: a misbehaving client and a clean session, the CI gate's exit codes, and log scanning.
 */

const SECRET = "sandbox-api-secret";

interface SessionInfo {
  id: string;
  merchant: { id: string; api_key: string; api_secret: string; payment_token: string; login: { email: string; password: string } };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

async function accessToken(base: string, apiKey: string, apiSecret: string): Promise<string> {
  const res = await post(`${base}/api/v2/auth/token`, { api_key: apiKey, api_secret: apiSecret });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function run(args: string[], env: Record<string, string> = {}) {
  const cli = runCli(args, env);
  // A run that hangs (a FIFO nobody writes to) is killed, so the test fails instead of leaving it behind.
  const killer = setTimeout(() => cli.child.kill("SIGKILL"), 15_000);
  const code = await cli.exited;
  clearTimeout(killer);
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

describe("merchant-sandbox report and scan-logs", () => {
  let server: CliProcess & { url: string };
  let dir: string;
  let badToken: string;
  let initRequestId: string;
  let clean: SessionInfo;

  beforeAll(async () => {
    server = await startCliServer(["--log-format", "off"]);
    dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-report-"));

    // A misbehaving client: the default merchant sends its JWT access token to payment/init.
    badToken = await accessToken(server.url, "sandbox-api-key", SECRET);
    const init = await fetch(`${server.url}/api/v2/payment/init`, { method: "POST", headers: { authorization: `Bearer ${badToken}` } });
    expect(init.status).toBe(401);
    const journal = (await (await fetch(`${server.url}/__sandbox/requests?merchant=merchant_sandbox_default`)).json()) as {
      requests: Array<{ id: string; code?: string }>;
    };
    initRequestId = journal.requests.find((r) => r.code === "access_token_on_payment_init")!.id;

    // A clean session: one token, a protected call, payment/init with the payment token.
    const created = await post(`${server.url}/__sandbox/sessions`, {});
    expect(created.status).toBe(201);
    clean = (await created.json()) as SessionInfo;
    const token = await accessToken(server.url, clean.merchant.api_key, clean.merchant.api_secret);
    expect((await fetch(`${server.url}/api/v2/payment/orders`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const paid = await fetch(`${server.url}/api/v2/payment/init`, {
      method: "POST",
      headers: { authorization: `Bearer ${clean.merchant.payment_token}` },
    });
    expect(paid.status).toBe(201);
  });

  afterAll(() => {
    server.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  describe("report", () => {
    it("fails the gate (exit 1) with a table of the findings when the integration made an error", async () => {
      const r = await run(["report", "--url", server.url]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(1);
      const lines = r.stdout.split("\n");
      expect(lines[0]).toBe(`Integration report for ${server.url} (all requests)`);
      expect(lines[2]).toMatch(/^SEVERITY {2}CODE +MESSAGE +EVIDENCE$/);
      expect(lines[3]).toMatch(/^-{8} {2}-+ {2}-+ {2}-+$/);
      const row = lines.find((l) => l.startsWith("error     jwt_on_payment_init "))!;
      expect(row).toContain("Merchant 'merchant_sandbox_default' sent the JWT");
      expect(row.endsWith(` ${initRequestId}`)).toBe(true);
      expect(r.stdout).toMatch(
        /\n1 error, 0 warnings, 0 info: the gate fails\. Fix the errors; the evidence ids are requests in GET \/__sandbox\/requests\.\n$/,
      );
      // Wrapped to 100 columns when not a terminal; no line but the verdict is longer.
      for (const l of lines.slice(0, -2)) expect(l.length).toBeLessThanOrEqual(100);
      expect(r.stdout).not.toContain(badToken);
    });

    it("passes the gate (exit 0) for a clean session: 'No findings'", async () => {
      const r = await run(["report", "--url", server.url, "--session", clean.id]);
      expect(r).toEqual({ code: 0, stdout: "No findings: the integration behaved.\n", stderr: "" });
    });

    it("filters by merchant, and prints JSON with --json (same exit code)", async () => {
      const bad = await run(["report", "--url", `${server.url}/`, "--merchant", "merchant_sandbox_default", "--json"]);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toEqual({
        findings: [{ code: "jwt_on_payment_init", severity: "error", message: expect.any(String), evidence: [initRequestId] }],
      });
      const good = await run(["report", "--url", server.url, "--session", clean.id, "--json"]);
      expect(good.code).toBe(0);
      expect(JSON.parse(good.stdout)).toEqual({ session: clean.id, findings: [] });
      const both = await run(["report", "--url", server.url, "--session", clean.id, "--merchant", clean.merchant.id]);
      expect(both).toEqual({ code: 0, stdout: "No findings: the integration behaved.\n", stderr: "" });
      // A mistyped merchant passes (nothing to report) but says so; an unknown session is an error.
      const typo = await run(["report", "--url", server.url, "--merchant", "merchant_sandbox_defualt"]);
      expect(typo).toEqual({
        code: 0,
        stdout: "No findings: the integration behaved.\n",
        stderr: "merchant-sandbox: note: the journal holds no request of merchant 'merchant_sandbox_defualt'; is the merchant id right?\n",
      });
      const gone = await run(["report", "--url", server.url, "--session", "ses_nope", "--merchant", clean.merchant.id]);
      expect(gone.code).toBe(2);
      expect(gone.stderr).toMatch(/^merchant-sandbox: GET \/__sandbox\/sessions\/ses_nope answered 404: There is no session 'ses_nope'/);
    });

    it("exits 2 with one clear line when the sandbox cannot be reached", async () => {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const r = await run(["report", "--url", url]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `merchant-sandbox: cannot reach the sandbox at ${url} (ECONNREFUSED); is it running? Check --url, or start it with 'merchant-sandbox serve' or 'docker run -p 4010:4010 merchant-sandbox'.\n`,
      );
    });

    it.each([
      [["--url", "not a url"], "merchant-sandbox: --url 'not a url' is not a URL; give the sandbox's base URL, e.g. http://localhost:4010\n"],
      [["--url", "ftp://localhost:4010"], "merchant-sandbox: --url must be an http:// or https:// URL, e.g. http://localhost:4010 (got 'ftp:')\n"],
      [[], "merchant-sandbox: Missing required argument: url\nRun 'merchant-sandbox --help' for the options.\n"],
    ])("exits 2 for a usage error %j", async (args, stderr) => {
      const r = await run(["report", ...args]);
      expect(r).toEqual({ code: 2, stdout: "", stderr });
    });

    it("exits 2 with the sandbox's own words for an unknown session", async () => {
      const r = await run(["report", "--url", server.url, "--session", "s_nope"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        "merchant-sandbox: GET /__sandbox/sessions/s_nope/report answered 404: There is no session 's_nope': it was deleted, reaped after being idle, or never created. Create one with POST /__sandbox/sessions.\n",
      );
    });
  });

  describe("scan-logs", () => {
    it("prints file:line:column for an issued token and the api_secret, never the secret, and exits 1", async () => {
      const file = join(dir, "app.log");
      const lines = [
        "2026-01-01T00:00:00Z INFO started",
        `2026-01-01T00:00:01Z DEBUG calling payment/init with Authorization: Bearer ${badToken}`,
        "2026-01-01T00:00:02Z INFO ok",
        `2026-01-01T00:00:03Z DEBUG config {"api_key":"sandbox-api-key","api_secret":"${SECRET}"}\r`,
      ];
      writeFileSync(file, lines.join("\n") + "\n");
      const r = await run(["scan-logs", "--url", server.url, file]);
      expect(r.code).toBe(1);
      expect(lines[1]!.indexOf(badToken) + 1).toBe(76);
      expect(lines[3]!.indexOf(SECRET) + 1).toBe(78);
      expect(r.stdout).toBe(
        `${file}:2:76: access_token of merchant merchant_sandbox_default in clear text\n` +
          `${file}:4:78: api_secret of merchant merchant_sandbox_default in clear text\n`,
      );
      expect(r.stderr).toBe("merchant-sandbox: 2 secrets in clear text in 1 of 1 file (4 lines). Redact them before they are logged.\n");
      for (const secret of [badToken, SECRET, ...badToken.split(".")]) expect(r.stdout + r.stderr).not.toContain(secret);
    });

    it("exits 0 on a clean file", async () => {
      const file = join(dir, "clean.log");
      writeFileSync(file, "GET /api/v2/payment/x 200 merchant=merchant_sandbox_default jti=5f0c\nPOST /api/v2/auth/token 200\n");
      const r = await run(["scan-logs", "--url", server.url, file]);
      expect(r).toEqual({ code: 0, stdout: "", stderr: "merchant-sandbox: no secret in clear text in 1 file (2 lines).\n" });
    });

    it("keeps line numbers and columns right across a file sent in many chunks and a line longer than one request", async () => {
      const file = join(dir, "big.log");
      const filler = (n: number) => `${String(n).padStart(6, "0")} INFO ${"x".repeat(70)}`;
      const lines = Array.from({ length: 3000 }, (_, i) => filler(i + 1)); // ~240 KB: several requests
      lines[2499] = `${filler(2500)} secret=${SECRET}`;
      lines[2999] = `token ${badToken}`;
      // One line of 40 000 characters, over the 64 KiB body limit once JSON-encoded (é is 2 bytes,
      // \u0001 is 6): sent in overlapping pieces. The secret and the token cross the pieces' cuts.
      const long: string[] = Array.from({ length: 40_000 }, (_, i) => (i % 3 === 0 ? "é" : i % 3 === 1 ? "\u0001" : "y"));
      const put = (at: number, text: string) => long.splice(at, text.length, ...Array.from(text));
      put(10_230, SECRET);
      put(18_000, badToken);
      put(39_000, "sandbox-password");
      lines.splice(1000, 0, long.join(""));
      writeFileSync(file, lines.join("\n") + "\n");
      const r = await run(["scan-logs", "--url", server.url, file]);
      expect(r.stderr).toBe("merchant-sandbox: 5 secrets in clear text in 1 of 1 file (3001 lines). Redact them before they are logged.\n");
      expect(r.code).toBe(1);
      expect(r.stdout.split("\n")).toEqual([
        `${file}:1001:10231: api_secret of merchant merchant_sandbox_default in clear text`,
        `${file}:1001:18001: access_token of merchant merchant_sandbox_default in clear text`,
        `${file}:1001:39001: password of merchant merchant_sandbox_default in clear text`,
        `${file}:2501:${filler(2500).length + 9}: api_secret of merchant merchant_sandbox_default in clear text`,
        `${file}:3001:7: access_token of merchant merchant_sandbox_default in clear text`,
        "",
      ]);
    });

    it("says only that a missing file cannot be read, exit 2, with no 'no secret' line: nothing was scanned", async () => {
      const missing = join(dir, "never-written.log");
      expect(await run(["scan-logs", "--url", server.url, missing])).toEqual({
        code: 2,
        stdout: "",
        stderr: `merchant-sandbox: ${missing}: cannot read it (no such file); give the path of a readable log file\n`,
      });
      const clean = join(dir, "clean.log");
      writeFileSync(clean, "nothing to see\n");
      expect(await run(["scan-logs", "--url", server.url, clean, missing])).toEqual({
        code: 2,
        stdout: "",
        stderr: `merchant-sandbox: ${missing}: cannot read it (no such file); give the path of a readable log file\n`,
      });
    });

    it("bounded memory: a 16 MB single line is read in overlapping pieces, a secret across each cut still found", async () => {
      const file = join(dir, "one-line.log");
      const line = Buffer.alloc(16 * 1024 * 1024, "x");
      // ASCII pieces are 61,440 characters, the next one starting 8,192 before the cut: cuts at
      // 61,440 and 114,688. The secret and the token cross them; the password is near the end.
      line.write(SECRET, 61_440 - 5);
      line.write(badToken, 114_688 - 100);
      line.write("sandbox-password", line.length - 40);
      writeFileSync(file, line);
      const r = await runCliMeasured(["scan-logs", "--url", server.url, file]);
      expect(r.stdout).toBe(
        `${file}:1:${61_440 - 4}: api_secret of merchant merchant_sandbox_default in clear text\n` +
          `${file}:1:${114_688 - 99}: access_token of merchant merchant_sandbox_default in clear text\n` +
          `${file}:1:${line.length - 39}: password of merchant merchant_sandbox_default in clear text\n`,
      );
      expect(r.stderr).toBe("merchant-sandbox: 3 secrets in clear text in 1 of 1 file (1 line). Redact them before they are logged.\n");
      expect(r.code).toBe(1);
      // The line was never held whole: 90 MB for any run, about 130 MB with this line's pieces come
      // and gone; holding it (with its 16 M-element array) took 358 MB.
      expect(r.maxRssBytes).toBeLessThan(200 * 1024 * 1024);
    });

    it("refuses what is not a regular file, after following links (a device, a FIFO with no writer): exit 2, no 'no secret' line", async () => {
      const zero = join(dir, "zero.log");
      symlinkSync("/dev/zero", zero);
      const fifo = join(dir, "fifo.log");
      execFileSync("mkfifo", [fifo]);
      const fix = "scan-logs reads only regular files, which end: write the log to a file and give its path";
      expect(await run(["scan-logs", "--url", server.url, zero])).toEqual({
        code: 2,
        stdout: "",
        stderr: `merchant-sandbox: ${zero}: not a regular file but a character device (a link to /dev/zero); ${fix}\n`,
      });
      expect(await run(["scan-logs", "--url", server.url, "/dev/urandom"])).toEqual({
        code: 2,
        stdout: "",
        stderr: `merchant-sandbox: /dev/urandom: not a regular file but a character device; ${fix}\n`,
      });
      expect(await run(["scan-logs", "--url", server.url, fifo])).toEqual({
        code: 2,
        stdout: "",
        stderr: `merchant-sandbox: ${fifo}: not a regular file but a named pipe (FIFO); ${fix}\n`,
      });
    });

    it("a file over --max-bytes is an error that says so (exit 2), never a pass", async () => {
      const file = join(dir, "large.log");
      writeFileSync(file, `${"y".repeat(1990)} ${SECRET}\n`);
      expect(await run(["scan-logs", "--url", server.url, "--max-bytes", "1000", file])).toEqual({
        code: 2,
        stdout: "",
        stderr: `merchant-sandbox: ${file}: it is 2010 bytes, over --max-bytes (1000); nothing of it was scanned. Raise --max-bytes to scan it whole\n`,
      });
      expect((await run(["scan-logs", "--url", server.url, "--max-bytes", "2010", file])).code).toBe(1);
      expect(await run(["scan-logs", "--url", server.url, "--max-bytes", "0", file])).toEqual({
        code: 2,
        stdout: "",
        stderr:
          "merchant-sandbox: --max-bytes must be a whole number of bytes, at least 1 (got '0').\nRun 'merchant-sandbox --help' for the options.\n",
      });
    });

    it("exits 2 for an unreadable file (after scanning the others) and for an unreachable sandbox", async () => {
      const file = join(dir, "one.log");
      writeFileSync(file, `x ${SECRET}\n`);
      const missing = join(dir, "missing.log");
      const r = await run(["scan-logs", "--url", server.url, missing, file, dir]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe(`${file}:1:3: api_secret of merchant merchant_sandbox_default in clear text\n`);
      expect(r.stderr).toBe(
        `merchant-sandbox: ${missing}: cannot read it (no such file); give the path of a readable log file\n` +
          `merchant-sandbox: ${dir}: cannot read it (it is a directory); give the path of a readable log file\n` +
          "merchant-sandbox: 1 secret in clear text in 1 of 1 file (1 line). Redact them before they are logged.\n",
      );
      const url = `http://127.0.0.1:${await closedPort()}`;
      const down = await run(["scan-logs", "--url", url, file]);
      expect(down.code).toBe(2);
      expect(down.stdout).toBe("");
      expect(down.stderr).toMatch(/^merchant-sandbox: cannot reach the sandbox at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); is it running\?/);
    });
  });
});

describe("report and scan-logs against a sandbox with an admin token", () => {
  let server: CliProcess & { url: string };
  let dir: string;
  beforeAll(async () => {
    server = await startCliServer(["--log-format", "off", "--admin-token", "t0p-admin-token-16"]);
    dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-admin-"));
  });
  afterAll(() => {
    server.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes --admin-token (or MERCHANT_SANDBOX_ADMIN_TOKEN) through, and says so when it is missing", async () => {
    const without = await run(["report", "--url", server.url]);
    expect(without.code).toBe(2);
    expect(without.stderr).toBe(
      "merchant-sandbox: GET /__sandbox/report answered 401: This sandbox's control plane needs the admin token: send 'Authorization: Bearer <admin token>' or 'X-Admin-Token: <admin token>'. Pass it with --admin-token.\n",
    );
    expect(await run(["report", "--url", server.url, "--admin-token", "t0p-admin-token-16"])).toEqual({
      code: 0,
      stdout: "No findings: the integration behaved.\n",
      stderr: "",
    });
    expect((await run(["report", "--url", server.url], { MERCHANT_SANDBOX_ADMIN_TOKEN: "t0p-admin-token-16" })).code).toBe(0);
    const wrong = await run(["report", "--url", server.url, "--admin-token", "nope"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("answered 401: The admin token is wrong.");

    const file = join(dir, "a.log");
    writeFileSync(file, `password=sandbox-password\n`);
    const scanned = await run(["scan-logs", "--url", server.url, "--admin-token", "t0p-admin-token-16", file]);
    expect(scanned.code).toBe(1);
    expect(scanned.stdout).toBe(`${file}:1:10: password of merchant merchant_sandbox_default in clear text\n`);
    expect((await run(["scan-logs", "--url", server.url, file])).code).toBe(2);
  });
});
