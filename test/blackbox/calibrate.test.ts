import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { type FinishedRun, runCliMeasured, runCliToEnd, startCliServer } from "../support/cli.js";
import type { ClientConfig, ProviderClient } from "../support/providers/client.js";
import { ECHO_CREDENTIALS, encodings, startEchoProvider } from "../support/providers/echo.js";
import { envelopeClient } from "../support/providers/envelope-client.js";
import { startEnvelopeProvider } from "../support/providers/envelope.js";
import { clientFlow, type FlowTranscript } from "../support/providers/flow.js";
import { startHostileProvider } from "../support/providers/hostile.js";
import type { ProviderOptions, RunningProvider } from "../support/providers/kit.js";
import { lexikStatusClient } from "../support/providers/lexik-status-client.js";
import { startLexikProvider } from "../support/providers/lexik.js";
import { nestedClient } from "../support/providers/nested-client.js";
import { startNestedProvider } from "../support/providers/nested.js";
import { postJson } from "../support/server.js";

/**
 * `calibrate` against three providers of different shapes (test/support/providers/), then the
 * provider's own client, unchanged, against `serve --profile` with the written file: it must go
 * through its whole flow exactly as it does against the provider.
 */

type Run = FinishedRun;
const cli = (args: string[]): Promise<Run> => runCliToEnd(args);

function providerArgs(p: RunningProvider): string[] {
  return ["--url", p.url, "--api-key", p.credentials.apiKey, "--api-secret", p.credentials.apiSecret];
}

const SANDBOX_CLIENT = { apiKey: "sandbox-api-key", apiSecret: "sandbox-api-secret", paymentToken: "sandbox-payment-token" };

const PROVIDERS: Array<{
  name: string;
  start: (o?: ProviderOptions) => Promise<RunningProvider>;
  client: (c: ClientConfig) => ProviderClient;
  login: boolean;
  transcript: FlowTranscript;
}> = [
  {
    name: "lexik",
    start: startLexikProvider,
    client: lexikStatusClient,
    login: true,
    transcript: {
      token: "a JWT",
      protectedCall: "ok",
      wrongSecret: "refused: unauthorized (HTTP 401)",
      invalidToken: "refused: unauthorized (HTTP 401)",
      expiry: "ok after: renewed the token after a 401",
      paymentInit: "created",
    },
  },
  {
    name: "envelope",
    start: startEnvelopeProvider,
    client: envelopeClient,
    login: false,
    transcript: {
      token: "a JWT",
      protectedCall: "ok",
      wrongSecret: "refused: AUTH_BAD_CREDENTIALS (HTTP 401)",
      invalidToken: "refused: TOKEN_INVALID (HTTP 401)",
      expiry: "ok after: renewed the token after TOKEN_EXPIRED",
      paymentInit: "created",
    },
  },
  {
    name: "nested",
    start: startNestedProvider,
    client: nestedClient,
    login: false,
    transcript: {
      token: "a JWT",
      protectedCall: "ok",
      wrongSecret: "refused: INVALID_CREDENTIALS (HTTP 401)",
      invalidToken: "refused: TOKEN_INVALID (HTTP 401)",
      expiry: "ok after: renewed the token after TOKEN_EXPIRED",
      paymentInit: "created",
    },
  },
];

const dir = mkdtempSync(join(tmpdir(), "calibrate-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(PROVIDERS)("calibrate against the $name provider", (p) => {
  let provider: RunningProvider;
  let expired: string;
  let run: Run;
  /** Requests the provider got from calibrate itself, counted before any other test talks to it. */
  let sentByCalibrate: number;
  let inFlightDuringCalibrate: number;
  const file = join(dir, `${p.name}.profile.yaml`);

  beforeAll(async () => {
    provider = await p.start();
    expired = await provider.expiredToken();
    const c = provider.credentials;
    run = await cli([
      "calibrate",
      ...providerArgs(provider),
      "--payment-token",
      c.paymentToken,
      "--expired-token",
      expired,
      "--allow-writes",
      ...(p.login ? ["--login", `${c.email}:${c.password}`] : []),
      "--out",
      file,
    ]);
    sentByCalibrate = provider.requests();
    inFlightDuringCalibrate = provider.maxInFlight();
  });
  afterAll(() => provider.close());

  it("writes the profile, prints the table, exits 0, sending its probes one at a time: 18 kinds and 6 repeats, with --login 20 and 8", () => {
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PROBE +CAME BACK +PROFILE NOW SAYS +HOW$/m);
    expect(run.stdout).toContain(`Wrote ${file}`);
    expect(YAML.parse(readFileSync(file, "utf8")).name).toBe(p.name);
    expect(sentByCalibrate).toBe(p.login ? 28 : 24);
    expect(inFlightDuringCalibrate).toBe(1);
  });

  it("writes no secret, token or password of the provider into the profile or its output", () => {
    const c = provider.credentials;
    const written = readFileSync(file, "utf8") + run.stdout + run.stderr;
    const secrets = [c.apiSecret, c.paymentToken, c.password, expired, ...provider.issued];
    expect(provider.issued.length).toBeGreaterThanOrEqual(2);
    for (const s of secrets) expect(written).not.toContain(s);
    // Not even a piece of a token: no JWT-shaped text at all.
    expect(written).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });

  it("the provider's client passes its whole flow against the sandbox serving the profile, as against the provider", async () => {
    const own = await clientFlow(p.client, { baseUrl: provider.url, ...provider.credentials }, async () => provider.advanceClock(61 * 60_000));
    expect(own).toEqual(p.transcript);

    const sandbox = await startCliServer(["--profile", file]);
    try {
      const viaSandbox = await clientFlow(p.client, { baseUrl: sandbox.url, ...SANDBOX_CLIENT }, async () => {
        const r = await fetch(`${sandbox.url}/__sandbox/clock`, postJson({ advance: "61m" }));
        expect(r.status).toBe(200);
      });
      expect(viaSandbox).toEqual(p.transcript);
    } finally {
      sandbox.child.kill();
      await sandbox.exited;
    }
  });

  it("--check against the same provider is clean (exit 0)", async () => {
    const check = await cli(["calibrate", "--check", file, ...providerArgs(provider), "--expired-token", expired]);
    expect(check.stderr).toBe("");
    expect(check.stdout).toMatch(/^The provider still answers as .* says \(\d+ requests sent\)\.$/m);
    expect(check.code).toBe(0);
  });
});

describe("calibrate --check against a provider that changed", () => {
  let before: RunningProvider;
  let after: RunningProvider;
  const file = join(dir, "nested-before.profile.yaml");
  beforeAll(async () => {
    before = await startNestedProvider();
    after = await startNestedProvider({ changed: true });
  });
  afterAll(async () => {
    await before.close();
    await after.close();
  });

  it("reports a renamed field and a new status, and exits 1", async () => {
    const expired = await before.expiredToken();
    const written = await cli(["calibrate", ...providerArgs(before), "--expired-token", expired, "--out", file]);
    expect(written.code).toBe(0);
    const check = await cli(["calibrate", "--check", file, ...providerArgs(after), "--expired-token", await after.expiredToken()]);
    expect(check.stderr).toBe("");
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/^token\.body: result\.accessToken +result\.accessToken: \{\{access_token\}\} +renamed to result\.token$/m);
    expect(check.stdout).toMatch(/^codes\.token_expired\.status +401 +403$/m);
    expect(check.stdout).toContain("2 differences: recalibrate");
  });
});

describe("calibrate when the provider cannot be reached or slows it down, or the command line is wrong", () => {
  it("exits 2, with or without --check, when nothing answers", async () => {
    const gone = await startEnvelopeProvider();
    await gone.close();
    const write = await cli(["calibrate", ...providerArgs(gone), "--out", join(dir, "never.yaml")]);
    expect(write.code).toBe(2);
    expect(write.stderr).toMatch(
      /^merchant-sandbox: Cannot reach http:\/\/127\.0\.0\.1:\d+ \(POST \/api\/v2\/auth\/token: ECONNREFUSED\)\. Check --url/,
    );
    const profile = join(dir, "unreachable.profile.yaml");
    writeFileSync(profile, "name: unreachable\ntoken: { body: { token: '{{access_token}}' } }\n");
    const check = await cli(["calibrate", "--check", profile, ...providerArgs(gone)]);
    expect(check.stderr).toMatch(/^merchant-sandbox: Cannot reach http:\/\/127\.0\.0\.1:\d+ /);
    expect(check.code).toBe(2);
    expect(write.stderr + check.stderr).not.toContain(gone.credentials.apiSecret);
  });

  it("exits 2 on a usage error or a profile to check that cannot be loaded, before sending anything", async () => {
    const provider = await startEnvelopeProvider();
    try {
      const usage = await cli(["calibrate", ...providerArgs(provider)]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toBe(
        "merchant-sandbox: Give --out FILE to write the profile, or --check FILE to compare with one.\nRun 'merchant-sandbox calibrate --help' for the options.\n",
      );
      const inUrl = await cli([
        "calibrate",
        "--url",
        "https://merchant:pa55word-in-url@provider.test",
        "--api-key",
        "k",
        "--api-secret",
        "s",
        "--out",
        join(dir, "x.yaml"),
      ]);
      expect(inUrl.code).toBe(2);
      expect(inUrl.stderr).toBe(
        "merchant-sandbox: --url must not hold credentials (user:password@); give them as --api-key and --api-secret.\nRun 'merchant-sandbox calibrate --help' for the options.\n",
      );
      const bad = join(dir, "bad.profile.yaml");
      writeFileSync(bad, "name: bad\ntokn: {}\n");
      const check = await cli(["calibrate", "--check", bad, ...providerArgs(provider)]);
      expect(check.code).toBe(2);
      expect(check.stderr).toBe(
        `merchant-sandbox: the profile to check cannot be used:\n${bad}:2:1: tokn: unknown key 'tokn'; did you mean 'token'? (allowed here: $schema, name, description, source, requestId, headers, token, refusal, codes, paymentInit, login, protected, jwt)\n`,
      );
      expect(provider.requests()).toBe(0);
    } finally {
      await provider.close();
    }
  });

  it("honours Retry-After on a 429 (waits, sends that probe again) and goes on", async () => {
    const provider = await startLexikProvider({ rateLimit: { requests: [3], retryAfter: "1" } });
    try {
      const started = Date.now();
      const run = await cli(["calibrate", ...providerArgs(provider), "--out", join(dir, "limited.yaml")]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      // The wrong-secret probe (the third request) was answered on the second try.
      expect(run.stdout).toMatch(/^wrong_secret +401 application\/json \{code: 401,/m);
      expect(provider.maxInFlight()).toBe(1);
    } finally {
      await provider.close();
    }
  });

  it("stops on a second 429 and exits 2, sending nothing more", async () => {
    const provider = await startLexikProvider({ rateLimit: { requests: [2, 3], retryAfter: "1" } });
    try {
      const run = await cli(["calibrate", ...providerArgs(provider), "--out", join(dir, "stopped.yaml")]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        // Request 2 is token_body sent again (per-request values), request 3 its retry.
        "merchant-sandbox: The provider answered 429 Too Many Requests to token_body (POST /api/v2/auth/token), asking to wait 1 s; calibrate stopped. Run it again later.\n",
      );
      expect(provider.requests()).toBe(3);
    } finally {
      await provider.close();
    }
  });
});

describe("calibrate's --url has its own variable: MERCHANT_SANDBOX_URL is the sandbox's (report, scan-logs)", () => {
  const credentials = (p: RunningProvider) => ["--api-key", p.credentials.apiKey, "--api-secret", p.credentials.apiSecret];
  const withEnv = runCliToEnd;

  it("wrong variable feeds nothing: MERCHANT_SANDBOX_URL (set for report and scan-logs, as the compose example does) is not calibrate's --url, exit 2, nothing sent", async () => {
    const provider = await startEnvelopeProvider();
    try {
      const run = await withEnv(["calibrate", ...credentials(provider), "--out", join(dir, "wrong-var.yaml")], {
        MERCHANT_SANDBOX_URL: provider.url,
      });
      expect(run).toEqual({
        code: 2,
        stdout: "",
        stderr:
          "merchant-sandbox: Give --url, the provider's test environment, e.g. https://provider-test.example (or MERCHANT_SANDBOX_PROVIDER_URL; MERCHANT_SANDBOX_URL is the sandbox's own URL, for report and scan-logs), or --from-har FILE to learn from a recording.\nRun 'merchant-sandbox calibrate --help' for the options.\n",
      });
      expect(provider.requests()).toBe(0);
    } finally {
      await provider.close();
    }
  });

  it("MERCHANT_SANDBOX_PROVIDER_URL feeds it, beside a MERCHANT_SANDBOX_URL that points elsewhere; a bad one is named as the variable", async () => {
    const provider = await startEnvelopeProvider();
    try {
      const run = await withEnv(["calibrate", ...credentials(provider), "--out", join(dir, "provider-var.yaml")], {
        MERCHANT_SANDBOX_PROVIDER_URL: provider.url,
        MERCHANT_SANDBOX_URL: "http://127.0.0.1:9",
      });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(provider.requests()).toBeGreaterThan(0);
      const bad = await withEnv(["calibrate", ...credentials(provider), "--out", join(dir, "x.yaml")], {
        MERCHANT_SANDBOX_PROVIDER_URL: "ftp://provider.test",
      });
      expect(bad.stderr).toBe(
        "merchant-sandbox: MERCHANT_SANDBOX_PROVIDER_URL must be an http(s) URL, e.g. https://provider-test.example (got 'ftp://provider.test').\nRun 'merchant-sandbox calibrate --help' for the options.\n",
      );
    } finally {
      await provider.close();
    }
  });

  it("calibrate --help names the variable under --url", async () => {
    const help = await withEnv(["calibrate", "--help"], {});
    expect(help.code).toBe(0);
    const at = help.stdout.indexOf("--url");
    expect(/\[env: ([A-Z0-9_]+)\]/.exec(help.stdout.slice(at))?.[1]).toBe("MERCHANT_SANDBOX_PROVIDER_URL");
  });
});

describe("calibrate against a provider whose answers are too large", () => {
  const MB = 1024 * 1024;
  /** The CLI with a few answers of the limit in hand; reading one of the bodies whole costs hundreds of MB. */
  const BOUND = 160 * MB;
  const args = (url: string) => ["calibrate", "--url", url, "--api-key", "k-1", "--api-secret", "s-123456", "--out", join(dir, "too-large.yaml")];

  it("bounded memory: an answer that never ends stops at --max-answer-bytes, naming the probe and the limit (exit 2)", async () => {
    const provider = await startHostileProvider("endless", 256 * MB);
    try {
      const run = await runCliMeasured([...args(provider.url), "--max-answer-bytes", "65536"]);
      expect(run.stderr).toBe(
        "merchant-sandbox: The provider's answer to token_body (POST /api/v2/auth/token) is over 65536 bytes, the limit of --max-answer-bytes; calibrate stopped reading it and sent nothing more. Check --url, or raise --max-answer-bytes if its answers really are that large.\n",
      );
      expect(run.code).toBe(2);
      expect(provider.requests()).toBe(1);
      // What the socket buffers held when calibrate hung up, not the 256 MB on offer.
      expect(provider.written()).toBeLessThan(32 * MB);
      expect(run.maxRssBytes).toBeLessThan(BOUND);
    } finally {
      await provider.close();
    }
  });

  it("bounded memory: a gzip bomb stops at the default 1 MiB once inflated, saying so (exit 2)", async () => {
    const provider = await startHostileProvider("gzip-bomb", 200 * MB);
    try {
      const run = await runCliMeasured(args(provider.url));
      expect(run.stderr).toBe(
        "merchant-sandbox: The provider's answer to token_body (POST /api/v2/auth/token) inflates to over 1048576 bytes once its Content-Encoding (gzip) is undone, the limit of --max-answer-bytes; calibrate stopped reading it and sent nothing more. Check --url, or raise --max-answer-bytes if its answers really are that large.\n",
      );
      expect(run.code).toBe(2);
      expect(provider.requests()).toBe(1);
      expect(run.maxRssBytes).toBeLessThan(BOUND);
    } finally {
      await provider.close();
    }
  });

  it("refuses a --max-answer-bytes that is not a number of bytes, before sending anything", async () => {
    const run = await cli([...args("http://127.0.0.1:9"), "--max-answer-bytes", "12"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "merchant-sandbox: --max-answer-bytes must be a whole number of bytes, at least 1024 (got '12').\nRun 'merchant-sandbox calibrate --help' for the options.\n",
    );
  });
});

describe("calibrate against a provider that echoes the secrets it was sent, encoded", () => {
  it("no secret in clear: the profile and the output hold no percent, base64(url) or JSON-escaped form of any secret", async () => {
    const provider = await startEchoProvider();
    const file = join(dir, "echo.profile.yaml");
    try {
      const c = ECHO_CREDENTIALS;
      const run = await cli([
        "calibrate",
        ...providerArgs(provider),
        "--payment-token",
        c.paymentToken,
        "--login",
        `${c.email}:${c.password}`,
        "--allow-writes",
        "--out",
        file,
      ]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const written = readFileSync(file, "utf8");
      const profile = YAML.parse(written) as { token: { body: Record<string, string> }; login: { body: Record<string, string> } };
      // The echoed fields are still there, with the secret cut out of each.
      expect(Object.keys(profile.token.body)).toContain("echo_json_slash");
      for (const [name, form] of Object.entries(encodings(c.apiSecret))) {
        expect(profile.token.body[`echo_${name}`], name).toMatch(/^we saw .*\[redacted\].* here$/);
        expect(profile.token.body[`echo_${name}`], name).not.toContain(form);
      }
      const everything = written + run.stdout;
      for (const secret of [c.apiSecret, c.password, c.paymentToken]) {
        expect(everything).not.toContain(secret);
        for (const [name, form] of Object.entries(encodings(secret))) expect(everything, `${name} of ${secret}`).not.toContain(form);
      }
    } finally {
      await provider.close();
    }
  });
});
