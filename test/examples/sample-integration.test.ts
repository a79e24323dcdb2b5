import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, runCli, startCliServer } from "../support/cli.js";

/**
 * examples/sample-integration run as the README's CI recipe runs it (issue 16): the real CLI server,
 * a session, the integration's own tests (`node --test`) with the session's base URL and
 * credentials in the environment, then the recipe's two gates, `report --session` and `scan-logs`
 * on the logs the run wrote.
 */

const EXAMPLE = fileURLToPath(new URL("../../examples/sample-integration/", import.meta.url));
const run = promisify(execFile);

interface Session {
  id: string;
  base_url: string;
  merchant: { api_key: string; api_secret: string; payment_token: string };
}

let server: CliProcess & { url: string };
let logs: string;
let session: Session;

beforeAll(async () => {
  server = await startCliServer();
  logs = await mkdtemp(join(tmpdir(), "sample-integration-logs-"));
  const res = await fetch(`${server.url}/__sandbox/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ scenario: "default" }),
  });
  expect(res.status).toBe(201);
  session = (await res.json()) as Session;
});

afterAll(async () => {
  server?.child.kill("SIGTERM");
  await server?.exited;
  if (logs) await rm(logs, { recursive: true, force: true });
});

async function gate(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const cli = runCli(args);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

describe("examples/sample-integration against the real sandbox", () => {
  it(
    "its node --test suite passes on a session, then the report and scan-logs gates pass on what it did and logged",
    { timeout: 60_000 },
    async () => {
      const env = {
        PATH: process.env.PATH ?? "",
        MERCHANT_API_BASE_URL: session.base_url,
        MERCHANT_API_KEY: session.merchant.api_key,
        MERCHANT_API_SECRET: session.merchant.api_secret,
        MERCHANT_PAYMENT_TOKEN: session.merchant.payment_token,
        MERCHANT_LOG_FILE: join(logs, "app.log"),
      };
      const tests = await run(process.execPath, ["--test", "--test-reporter=tap"], { cwd: EXAMPLE, env }).catch(
        (e: { stdout: string; stderr: string; code: number }) => e,
      );
      await writeFile(join(logs, "integration-tests.log"), tests.stdout + tests.stderr);
      const summary = Object.fromEntries(
        [...tests.stdout.matchAll(/^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
      );
      expect(summary, tests.stdout.slice(-3000)).toEqual({ tests: 17, pass: 17, fail: 0, cancelled: 0, skipped: 0, todo: 0 });
      // The run logged its work to the file, so the scan below reads something.
      expect(await readFile(join(logs, "app.log"), "utf8")).toContain('"message":"hosted payment created"');

      // Then one run of the integration, as examples/README.md has it after the tests.
      const main = await run(process.execPath, ["src/main.js"], { cwd: EXAMPLE, env });
      expect(main.stdout).toContain('"message":"hosted payment created"');

      // Clean, not merely passing: the renewals its tests force (a revoked, expired or rotated-out
      // token) are not counted against it, nor missed proactive renewals (issue 25).
      const report = await gate(["report", "--url", server.url, "--session", session.id]);
      expect(report.stderr).toBe("");
      expect(report.stdout).toBe("No findings: the integration behaved.\n");
      expect(report.code).toBe(0);
      const findings = await fetch(`${server.url}/__sandbox/sessions/${session.id}/report`).then((r) => r.json());
      expect(findings.findings).toEqual([]);

      const scan = await gate(["scan-logs", "--url", server.url, join(logs, "app.log"), join(logs, "integration-tests.log")]);
      expect(scan.stdout).toBe("");
      expect(scan.code).toBe(0);

      // The gate is not vacuous: the same scan finds the session's secret when a log holds it.
      await writeFile(join(logs, "leaky.log"), `config: secret=${session.merchant.api_secret}\n`);
      const leaky = await gate(["scan-logs", "--url", server.url, join(logs, "leaky.log")]);
      expect(leaky.stdout).toBe(`${join(logs, "leaky.log")}:1:16: api_secret of merchant merchant_sandbox_default.${session.id} in clear text\n`);
      expect(leaky.code).toBe(1);
    },
  );
});
