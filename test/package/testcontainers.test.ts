import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ContainerEngine,
  ENGINE_START_GUARD_MS,
  needsContainerEngine,
  startContainerEngine,
  testcontainersEnv,
} from "../support/container-engine.js";
import { collectSnippets } from "../support/snippets.js";

/**
 * merchant-sandbox/testcontainers for real (issue 34): a Docker-compatible engine (podman's API
 * here), the image built from the repository's Dockerfile through the module, then docs/ci.md's
 * Node block run as it is printed, and the module's own settings (files copied in, the admin token,
 * the loopback binding) checked by test/support/testcontainers/module-check.mjs. Each runs in a
 * child `node --test` with the engine's variables, as a team's suite would; this file asserts they
 * ran and passed every test.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const IMAGE = "localhost/merchant-sandbox:testcontainers-test";
/** A guard against hangs while the engine builds (npm ci inside the image): not a figure asserted. */
const BUILD_GUARD_MS = 900_000;
const RUN_GUARD_MS = 180_000;

const PROFILE = `name: module-check-profile
token:
  headers: { X-Acme-Env: test }
  body: { result: { accessToken: "{{access_token}}", validity: "{{expires_in_minutes}}" } }
refusal:
  contentType: application/json
  body: { error: { code: "{{code}}", message: "{{message}}" } }
codes:
  wrong_api_secret: { code: INVALID_CREDENTIALS, status: 403 }
`;

const SCENARIO = `name: module-check
description: A scenario file of the test's machine, copied into the container.
merchants:
  - id: merchant_module_check
    api_key: module-check-key
    api_secret: module-check-secret-0123456789
    payment_token: module-check-payment-token
    scopes: [payment, cashout]
`;

/** The docs' Node block: the one that imports merchant-sandbox/testcontainers. */
function docsNodeBlock(): string {
  const blocks = collectSnippets(ROOT).filter(
    (s) => s.file === "docs/ci.md" && s.lang === "js" && s.code.includes('"merchant-sandbox/testcontainers"'),
  );
  expect(blocks.map((b) => b.where)).toHaveLength(1);
  return blocks[0]!.code;
}

interface NodeRun {
  code: number;
  output: string;
}

/** `node <args>` in `dir`, with the engine's variables: its exit code and everything it printed. */
function node(dir: string, args: string[], env: Record<string, string>, timeout: number): Promise<NodeRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: dir, env: { ...process.env, ...env }, timeout }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** The summary lines of node:test's report (`# pass 3`, `# fail 0`). */
const tally = (output: string) =>
  Object.fromEntries([...output.matchAll(/^# (tests|pass|fail|cancelled|skipped) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));

describe("merchant-sandbox/testcontainers against a real engine", () => {
  const present = needsContainerEngine();
  let engine: ContainerEngine | undefined;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (!present) return;
    engine = await startContainerEngine();
    dir = mkdtempSync(join(tmpdir(), "testcontainers-"));
    // The package by its name, as once installed; testcontainers resolves from the repository's node_modules.
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "merchant-sandbox"));
    writeFileSync(join(dir, "profile.yaml"), PROFILE);
    writeFileSync(join(dir, "scenario.yaml"), SCENARIO);
    writeFileSync(join(dir, "bad-scenario.yaml"), SCENARIO.replace(/^description: .*\n/m, ""));
    writeFileSync(
      join(dir, "build.mjs"),
      `import { MerchantSandboxContainer } from "merchant-sandbox/testcontainers";\nawait MerchantSandboxContainer.build(${JSON.stringify(ROOT)}, ${JSON.stringify(IMAGE)});\n`,
    );
    env = {
      ...testcontainersEnv(engine),
      MERCHANT_SANDBOX_IMAGE: IMAGE,
      PROFILE_FILE: join(dir, "profile.yaml"),
      SCENARIO_FILE: join(dir, "scenario.yaml"),
      BAD_SCENARIO_FILE: join(dir, "bad-scenario.yaml"),
    };
    const built = await node(dir, ["build.mjs"], env, BUILD_GUARD_MS);
    if (built.code !== 0) throw new Error(`building the image through the module failed (exit ${built.code}):\n${built.output}`);
  }, ENGINE_START_GUARD_MS + BUILD_GUARD_MS);

  afterAll(async () => {
    await engine?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("runs docs/ci.md's Node block as printed: a token exchange, a protected call and a clean report", { timeout: RUN_GUARD_MS }, async () => {
    writeFileSync(join(dir, "sandbox.test.mjs"), docsNodeBlock());
    const run = await node(dir, ["--test", "--test-reporter=tap", "sandbox.test.mjs"], env, RUN_GUARD_MS);
    expect({ code: run.code, tally: tally(run.output) }, run.output).toEqual({
      code: 0,
      tally: { tests: 1, pass: 1, fail: 0, cancelled: 0, skipped: 0 },
    });
  });

  it("copies a scenario and a profile file in, sends the admin token, and publishes on loopback only", { timeout: RUN_GUARD_MS }, async () => {
    const check = fileURLToPath(new URL("../support/testcontainers/module-check.mjs", import.meta.url));
    writeFileSync(join(dir, "module-check.test.mjs"), `import ${JSON.stringify(check)};\n`);
    const run = await node(dir, ["--test", "--test-reporter=tap", "module-check.test.mjs"], env, RUN_GUARD_MS);
    expect({ code: run.code, tally: tally(run.output) }, run.output).toEqual({
      code: 0,
      tally: { tests: 6, pass: 6, fail: 0, cancelled: 0, skipped: 0 },
    });
  });
});
