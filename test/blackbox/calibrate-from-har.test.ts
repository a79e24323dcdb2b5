import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { type CliProcess, type FinishedRun, runCli, runCliToEnd, startCliServer } from "../support/cli.js";
import type { ClientSettings, FrameworkClient } from "../support/providers/framework-client.js";
import { EXPIRE_BY_MS, frameworkFlow, SANDBOX_MERCHANT } from "../support/providers/framework-flow.js";
import type { RunningProvider } from "../support/providers/kit.js";
import { gatewayClient } from "../support/providers/gateway-client.js";
import { startGatewayProvider } from "../support/providers/gateway.js";
import { goClient } from "../support/providers/go-client.js";
import { keycloakClient } from "../support/providers/keycloak-client.js";
import { startKeycloakProvider } from "../support/providers/keycloak.js";
import { startGoProvider } from "../support/providers/go-service.js";
import { laravelClient } from "../support/providers/laravel-client.js";
import { lexikClient } from "../support/providers/lexik-client.js";
import { startLexikProvider } from "../support/providers/lexik.js";
import { startLaravelProvider } from "../support/providers/laravel.js";
import { springClient } from "../support/providers/spring-client.js";
import { startSpringProvider } from "../support/providers/spring.js";
import { FRAMEWORK_TRANSCRIPTS } from "../support/providers/transcripts.js";
import { startHostileProvider } from "../support/providers/hostile.js";
import { postJson } from "../support/server.js";

/**
 * Issue 33, point 6: a team whose provider may not be probed records its integration's own test
 * run through `merchant-sandbox record`, and `calibrate --from-har` learns the profile from the
 * recording. The framework's client then passes its whole flow against the sandbox serving that
 * profile exactly as against the provider; the recording holds no secret in clear; `--check`
 * against the same recording is clean.
 */

async function startRecorder(upstream: string, out: string): Promise<CliProcess & { url: string }> {
  const cli = runCli(["record", "--upstream", upstream, "--port", "0", "--out", out]);
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /listening on (http:\/\/\S+) and/.exec(cli.stdout());
      if (m) resolve(m[1]!);
    };
    cli.child.stdout!.on("data", look);
    void cli.exited.then((code) => reject(new Error(`record exited ${code}: ${cli.stderr()}`)));
  });
  return { ...cli, url };
}

const dir = mkdtempSync(join(tmpdir(), "calibrate-from-har-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  { name: "lexik" as const, start: startLexikProvider, client: lexikClient },
  { name: "spring" as const, start: startSpringProvider, client: springClient },
  { name: "laravel" as const, start: startLaravelProvider, client: laravelClient },
  { name: "go" as const, start: startGoProvider, client: goClient },
  { name: "gateway" as const, start: startGatewayProvider, client: gatewayClient },
  { name: "keycloak" as const, start: startKeycloakProvider, client: keycloakClient },
])("calibrate --from-har a recording of the $name client's own run", (f) => {
  let provider: RunningProvider;
  const har = join(dir, `${f.name}.har`);
  const file = join(dir, `${f.name}.har.profile.yaml`);
  let recorded: string[];
  let recordOutput: string;
  let learnt: FinishedRun;

  beforeAll(async () => {
    provider = await f.start();
    const recorder = await startRecorder(provider.url, har);
    const c = provider.credentials;
    const settings: ClientSettings = {
      baseUrl: recorder.url,
      apiKey: c.apiKey,
      apiSecret: c.apiSecret,
      paymentToken: c.paymentToken,
      email: c.email,
      password: c.password,
    };
    recorded = await frameworkFlow(f.client as (s: ClientSettings) => FrameworkClient, settings, async () => provider.advanceClock(EXPIRE_BY_MS));
    process.kill(recorder.child.pid!, "SIGTERM");
    await recorder.exited;
    recordOutput = recorder.stdout();
    // Learnt here, so that every test below finds the profile whatever order they run in.
    learnt = await runCliToEnd(["calibrate", "--from-har", har, "--out", file]);
  }, 60_000);
  afterAll(() => provider.close());

  it("the proxy is transparent: the client's run through it is its run against the provider", () => {
    expect(recorded).toEqual(FRAMEWORK_TRANSCRIPTS[f.name]);
    expect(recordOutput).toMatch(new RegExp(`exchanges written to ${har.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });

  it("the recording holds no secret, password, payment token or signed token of the provider in clear", () => {
    const text = readFileSync(har, "utf8");
    const c = provider.credentials;
    for (const secret of [c.apiSecret, c.password, c.paymentToken, ...provider.issued]) expect(text).not.toContain(secret);
    // Every request of the client's flow (its transcript's statuses): 22, recorded whole.
    expect(JSON.parse(text).log.entries).toHaveLength(22);
  });

  it("calibrate learns a profile from it under which the client's whole flow goes as against the provider", async () => {
    const run = learnt;
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\(\d+ exchanges of .* read, \d+ used\)/);
    // What the recording did not cover is named, with the probe that would.
    expect(run.stdout).toMatch(/^other_scheme +- +- +inferred: not in the recording: the probe that would observe it sends Authorization: Basic/m);
    // The tampered token the client sent is told apart from the one issued, though neither keeps its signature.
    expect(run.stdout).toMatch(/^foreign_jwt +401 /m);
    const sandbox = await startCliServer(["--profile", file]);
    try {
      const lines = await frameworkFlow(
        f.client as (s: ClientSettings) => FrameworkClient,
        { baseUrl: sandbox.url, ...SANDBOX_MERCHANT },
        async () => {
          const r = await fetch(`${sandbox.url}/__sandbox/clock`, postJson({ advance: `${EXPIRE_BY_MS / 60_000}m` }));
          expect(r.status).toBe(200);
        },
      );
      expect(lines).toEqual(FRAMEWORK_TRANSCRIPTS[f.name]);
    } finally {
      sandbox.child.kill();
      await sandbox.exited;
    }
    const profile = readFileSync(file, "utf8");
    expect(profile).toContain(`# Written by merchant-sandbox calibrate from the recording ${har}`);
    expect(profile).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
    expect(YAML.parse(profile).name).toBe(`${f.name}`);
    // The gateway's budget counts down on every answer: a counter, learnt from repeats far apart in the recording.
    const counted = Object.entries(YAML.parse(profile).headers ?? {}).filter(([, v]) => String(v).includes("{{count_"));
    expect(counted).toEqual(f.name === "gateway" ? [["X-Ratelimit-Remaining-Minute", "{{count_down:60}}"]] : []);
  }, 60_000);

  it("--check against the same recording is clean, twice", async () => {
    for (let i = 0; i < 2; i++) {
      const check = await runCliToEnd(["calibrate", "--check", file, "--from-har", har]);
      expect([check.code, check.stderr]).toEqual([0, ""]);
      expect(check.stdout).toMatch(/^The provider still answers as .* says \(\d+ exchanges of .* read, \d+ used\)\.$/m);
    }
  });
});

describe("record in front of a provider whose answer never ends", () => {
  it("bounded memory: the client gets a 502 saying why past 1 MiB, nothing is recorded, and the next request goes on", async () => {
    const hostile = await startHostileProvider("endless", 128 * 1024 * 1024);
    const har = join(dir, "hostile.har");
    const recorder = await startRecorder(hostile.url, har);
    try {
      const r = await fetch(`${recorder.url}/api/v2/auth/token`, { method: "POST" });
      expect([r.status, r.headers.get("content-type"), await r.text()]).toEqual([
        502,
        "text/plain; charset=utf-8",
        `merchant-sandbox record: forwarding to ${hostile.url} failed: its answer is over 1048576 bytes; nothing was recorded for it.\n`,
      ]);
      expect((await fetch(`${recorder.url}/api/v2/auth/token`, { method: "POST" })).status).toBe(502);
      expect(hostile.requests()).toBe(2);
      // What the sockets held when the proxy stopped reading, not the 2 x 128 MB on offer.
      expect(hostile.written()).toBeLessThan(64 * 1024 * 1024);
      expect(JSON.parse(readFileSync(har, "utf8")).log.entries).toEqual([]);
    } finally {
      process.kill(recorder.child.pid!, "SIGTERM");
      await recorder.exited;
      await hostile.close();
    }
  }, 60_000);
});

describe("calibrate --from-har a recording in mitmproxy's format (test/fixtures/har/)", () => {
  const fixture = join(import.meta.dirname, "../fixtures/har/mitmproxy-savehar.har");

  it("writes a profile the sandbox serves, without a secret of the recording, and says what it did not cover", async () => {
    const file = join(dir, "mitmproxy.profile.yaml");
    const run = await runCliToEnd(["calibrate", "--from-har", fixture, "--out", file]);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toContain(`(7 exchanges of ${fixture} read, 7 used)`);
    const text = readFileSync(file, "utf8");
    for (const secret of ["secret-7a9c41", "pay-tok-5f1c2d", "c2lnbmF0dXJlLW5vdC1yZWFs"]) expect(text + run.stdout).not.toContain(secret);
    const sandbox = await startCliServer(["--profile", file]);
    try {
      const r = await fetch(`${sandbox.url}/api/v2/payment/status`);
      const answer = [r.status, r.headers.get("content-type"), r.headers.get("www-authenticate"), await r.text()];
      expect(answer).toEqual([401, "text/plain; charset=utf-8", "Bearer", "missing token\n"]);
    } finally {
      sandbox.child.kill();
      await sandbox.exited;
    }
  });

  it("a recording of the Go client's run in mitmproxy's shape: the client passes its whole flow against the sandbox learnt from it", async () => {
    const run = fixture.replace("mitmproxy-savehar.har", "mitmproxy-go-client-run.har");
    const file = join(dir, "go-mitmproxy.profile.yaml");
    const learnt = await runCliToEnd(["calibrate", "--from-har", run, "--out", file]);
    expect([learnt.code, learnt.stderr]).toEqual([0, ""]);
    expect(learnt.stdout).toContain(`(22 exchanges of ${run} read, 14 used)`);
    const sandbox = await startCliServer(["--profile", file]);
    try {
      const lines = await frameworkFlow(goClient, { baseUrl: sandbox.url, ...SANDBOX_MERCHANT }, async () => {
        const r = await fetch(`${sandbox.url}/__sandbox/clock`, postJson({ advance: `${EXPIRE_BY_MS / 60_000}m` }));
        expect(r.status).toBe(200);
      });
      expect(lines).toEqual(FRAMEWORK_TRANSCRIPTS.go);
    } finally {
      sandbox.child.kill();
      await sandbox.exited;
    }
  }, 60_000);

  it("a file that is no HAR: exit 2 with what is wrong and how to fix it, nothing written", async () => {
    const bad = join(dir, "not.har");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(bad, '{"entries": []}');
    const run = await runCliToEnd(["calibrate", "--from-har", bad, "--out", join(dir, "never.yaml")]);
    expect([run.code, run.stdout, run.stderr]).toEqual([
      2,
      "",
      `merchant-sandbox: The recording ${bad} has no log.entries: it is not a HAR 1.2 file.\n`,
    ]);
  });
});
