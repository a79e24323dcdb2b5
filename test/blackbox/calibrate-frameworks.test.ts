import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FinishedRun, runCliToEnd, startCliServer } from "../support/cli.js";
import type { ClientSettings, FrameworkClient } from "../support/providers/framework-client.js";
import type { Drift, FrameworkOptions } from "../support/providers/framework-kit.js";
import { EXPIRE_BY_MS, frameworkFlow, SANDBOX_MERCHANT } from "../support/providers/framework-flow.js";
import type { RunningProvider } from "../support/providers/kit.js";
import { gatewayClient } from "../support/providers/gateway-client.js";
import { GATEWAY_DRIFTS, startGatewayProvider } from "../support/providers/gateway.js";
import { goClient } from "../support/providers/go-client.js";
import { keycloakClient } from "../support/providers/keycloak-client.js";
import { KEYCLOAK_DRIFTS, startKeycloakProvider } from "../support/providers/keycloak.js";
import { GO_DRIFTS, startGoProvider } from "../support/providers/go-service.js";
import { laravelClient } from "../support/providers/laravel-client.js";
import { LARAVEL_DRIFTS, startLaravelProvider } from "../support/providers/laravel.js";
import { lexikClient } from "../support/providers/lexik-client.js";
import { LEXIK_DRIFTS, startLexikProvider } from "../support/providers/lexik.js";
import { springClient } from "../support/providers/spring-client.js";
import { SPRING_DRIFTS, startSpringProvider } from "../support/providers/spring.js";
import { FRAMEWORK_TRANSCRIPTS } from "../support/providers/transcripts.js";
import { postJson } from "../support/server.js";

/**
 * Issue 24, Tests: `calibrate` against each framework fake (Symfony + Lexik, Spring resource
 * server, Laravel + tymon), then the framework's own client, unchanged, through its whole flow
 * against `serve --profile <the written file>`: the transcript must be the one it gives against
 * the fake (transcripts.ts). `calibrate --check` must be clean against the unchanged fake (its
 * per-request values compared by shape) and report each kind of drift in one line. No secret or
 * token may reach the profile, calibrate's output or a transcript.
 */

type Run = FinishedRun;
const cli = (args: string[]): Promise<Run> => runCliToEnd(args);

/** Everything calibrate is given: the same for writing and for --check. */
async function calibrateArgs(p: RunningProvider): Promise<{ args: string[]; expired: string }> {
  const c = p.credentials;
  const expired = await p.expiredToken();
  return {
    expired,
    args: [
      "--url",
      p.url,
      "--api-key",
      c.apiKey,
      "--api-secret",
      c.apiSecret,
      "--payment-token",
      c.paymentToken,
      "--expired-token",
      expired,
      "--allow-writes",
      "--login",
      `${c.email}:${c.password}`,
    ],
  };
}

/** What the one difference line must name, per framework and drift (each fake's DRIFT comment says what changed). */
const NAMED: Record<string, Partial<Record<Drift, RegExp>>> = {
  lexik: {
    "renamed-field": /\bjwt\b/,
    "removed-field": /\bcode\b/,
    "added-field": /refresh_token/,
    status: /\b403\b/,
    code: /4011/,
    message: /JWT Token expired/,
    challenge: /realm/,
    "content-type": /application\/problem\+json/,
    "body-empty": /empty|no body/i,
    "header-appeared": /x-request-id/i,
    "header-disappeared": /cache-control/i,
  },
  spring: {
    "renamed-field": /expiresIn/,
    "removed-field": /\bpath\b/,
    "added-field": /\bmessage\b/,
    status: /\b403\b/,
    code: /invalid_request/,
    message: /Token expired at/,
    challenge: /resource_metadata/,
    "content-type": /application\/problem\+json/,
    "body-empty": /empty|no body/i,
    "body-nonempty": /body/i,
    "header-appeared": /x-request-id/i,
    "header-disappeared": /x-frame-options/i,
  },
  go: {
    "renamed-field": /expires_at/,
    message: /token has expired/,
    "header-appeared": /x-request-id/i,
  },
  gateway: {
    status: /\b403\b/,
  },
  keycloak: {
    code: /invalid_client/,
  },
  laravel: {
    "renamed-field": /\bresult\b/,
    "removed-field": /token_type/,
    "added-field": /refresh_expires_in/,
    status: /\b400\b/,
    message: /Token expired/,
    challenge: /jwt-auth|Bearer/,
    "content-type": /application\/vnd\.api\+json/,
    "body-empty": /empty|no body/i,
    "header-appeared": /x-ratelimit-limit/i,
    "header-disappeared": /x-request-id/i,
  },
};

const FRAMEWORKS: Array<{
  name: keyof typeof FRAMEWORK_TRANSCRIPTS;
  start: (o?: FrameworkOptions) => Promise<RunningProvider>;
  client: (s: ClientSettings) => FrameworkClient;
  drifts: readonly Drift[];
}> = [
  { name: "lexik", start: startLexikProvider, client: lexikClient, drifts: LEXIK_DRIFTS },
  { name: "spring", start: startSpringProvider, client: springClient, drifts: SPRING_DRIFTS },
  { name: "laravel", start: startLaravelProvider, client: laravelClient, drifts: LARAVEL_DRIFTS },
  { name: "go", start: startGoProvider, client: goClient, drifts: GO_DRIFTS },
  { name: "gateway", start: startGatewayProvider, client: gatewayClient, drifts: GATEWAY_DRIFTS },
  { name: "keycloak", start: startKeycloakProvider, client: keycloakClient, drifts: KEYCLOAK_DRIFTS },
];

/** What each fake's expired-token answer says of its leeway: the stack its text names, and that stack's default. */
const LEEWAY: Record<string, string | undefined> = {
  lexik: undefined,
  spring: "1m",
  laravel: undefined,
  go: undefined,
  gateway: undefined,
  keycloak: undefined,
};
const STACK: Record<string, string> = {
  lexik: "LexikJWTAuthenticationBundle",
  spring: "Spring Security",
  laravel: "tymon/jwt-auth",
  go: "golang-jwt/jwt v5",
  gateway: "golang-jwt/jwt v5",
  keycloak: "Keycloak",
};

/**
 * The claims the sandbox's token has and the provider's lacks: jti (revocation goes by it) where
 * the provider writes none, and client_id where its tokens are typ JWT and carry no client claim
 * (the login's token is told apart by it). docs/profiles.md, "Claims".
 */
const BOOKKEEPING: Record<string, string[]> = {
  lexik: ["jti", "client_id"],
  spring: ["jti"],
  laravel: ["client_id"],
  go: ["jti", "client_id"],
  gateway: ["jti", "client_id"],
  keycloak: [],
};

const dir = mkdtempSync(join(tmpdir(), "calibrate-frameworks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(FRAMEWORKS)("calibrate against the $name fake", (f) => {
  let provider: RunningProvider;
  let args: string[];
  let expired: string;
  let written: Run;
  const file = join(dir, `${f.name}.profile.yaml`);
  /** What calibrate printed when it wrote the profile (beforeAll), searched for secrets with the file. */
  const outputs: string[] = [];
  /** No secret or token of the provider known so far in `text`: checked where each output is made, whatever the order. */
  const expectNoSecret = (text: string) => {
    for (const s of secrets()) expect(text).not.toContain(s);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  };
  const secrets = () => {
    const c = provider.credentials;
    return [c.apiSecret, c.paymentToken, c.password, expired, ...provider.issued];
  };

  beforeAll(async () => {
    provider = await f.start();
    ({ args, expired } = await calibrateArgs(provider));
    written = await cli(["calibrate", ...args, "--out", file]);
    outputs.push(written.stdout, written.stderr);
  }, 60_000);
  afterAll(() => provider.close());

  it("writes the profile and exits 0", () => {
    expect(written.stderr).toBe("");
    expect(written.code).toBe(0);
    expect(written.stdout).toContain(`Wrote ${file}`);
  });

  it("reads the leeway from the expired token's refusal: Spring's 60 s by its text, none for Lexik and tymon", () => {
    const profile = YAML.parse(readFileSync(file, "utf8"));
    expect(profile.jwt.leeway).toBe(LEEWAY[f.name]);
    // The gateway's budget counts down from the limit it states, on every answer; no other fake counts anything.
    const counted = Object.entries(profile.headers ?? {}).filter(([, v]) => String(v).includes("{{count_"));
    expect(counted).toEqual(f.name === "gateway" ? [["X-Ratelimit-Remaining-Minute", "{{count_down:60}}"]] : []);
    expect(written.stdout).toMatch(/^leeway +401 to a token \d+ s past its exp: /m);
    // The file's header lists what was inferred: the stack, its default, its source.
    expect(readFileSync(file, "utf8")).toContain(`#   - leeway: inferred from ${STACK[f.name]}'s default (`);
  });

  it("the sandbox's tokens under the profile write their header's members in the provider's order", async () => {
    const keys = (jwt: string) => Object.keys(JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString("utf8")));
    const sandbox = await startCliServer(["--profile", file]);
    try {
      const r = await fetch(
        `${sandbox.url}/api/v2/auth/token`,
        postJson({ api_key: SANDBOX_MERCHANT.apiKey, api_secret: SANDBOX_MERCHANT.apiSecret }),
      );
      const body = (await r.json()) as Record<string, unknown>;
      const token = Object.values(body).find((v): v is string => typeof v === "string" && v.split(".").length === 3)!;
      expect(keys(token)).toEqual(keys(provider.issued[0]!));
      // Its claims: the provider's, but for the sandbox's bookkeeping where the provider has no such claim.
      const claims = (jwt: string) => Object.keys(JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8")));
      const theirs = new Set(provider.issued.flatMap(claims));
      const extra = claims(token).filter((c) => !theirs.has(c));
      expect(extra).toEqual(BOOKKEEPING[f.name]);
    } finally {
      sandbox.child.kill();
      await sandbox.exited;
    }
  });

  it("the client's whole flow against the sandbox serving the profile gives the fake's transcript", async () => {
    const sandbox = await startCliServer(["--profile", file]);
    try {
      const lines = await frameworkFlow(f.client, { baseUrl: sandbox.url, ...SANDBOX_MERCHANT }, async () => {
        const r = await fetch(`${sandbox.url}/__sandbox/clock`, postJson({ advance: `${EXPIRE_BY_MS / 60_000}m` }));
        expect(r.status).toBe(200);
      });
      expectNoSecret(lines.join("\n"));
      expect(lines).toEqual(FRAMEWORK_TRANSCRIPTS[f.name]);
    } finally {
      sandbox.child.kill();
      await sandbox.exited;
    }
  }, 60_000);

  it("--check against the unchanged fake is clean (exit 0), twice in a row: per-request values compared by shape", async () => {
    for (let night = 0; night < 2; night++) {
      const check = await cli(["calibrate", "--check", file, ...args]);
      expectNoSecret(check.stdout + check.stderr);
      expect(check.stderr).toBe("");
      expect(check.stdout).toMatch(/^The provider still answers as .* says \(\d+ requests sent\)\.$/m);
      expect(check.code).toBe(0);
    }
  }, 60_000);

  it.each(f.drifts)("--check against the fake after a %s drift exits 1 with one line naming it", async (drift) => {
    const changed = await f.start({ drift });
    try {
      const { args: changedArgs, expired: changedExpired } = await calibrateArgs(changed);
      const check = await cli(["calibrate", "--check", file, ...changedArgs]);
      expectNoSecret(check.stdout + check.stderr);
      for (const s of [changedExpired, ...changed.issued]) expect(check.stdout + check.stderr).not.toContain(s);
      expect(check.stderr).toBe("");
      expect(check.code).toBe(1);
      expect(check.stdout).toContain("\n1 difference: recalibrate");
      expect(check.stdout).toMatch(NAMED[f.name]![drift]!);
    } finally {
      await changed.close();
    }
  }, 60_000);

  it("no secret or token of the provider in the profile or calibrate's output (each other output is checked where it is made)", () => {
    expectNoSecret(readFileSync(file, "utf8") + outputs.join("\n"));
  });
});
