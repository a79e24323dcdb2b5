import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The package as a user gets it: `npm pack` (its `prepare` makes sure dist/ is current), installed
 * with `npm install <tarball>` into a scratch project of its own, then the installed CLI through
 * npx and the README's in-process msw snippet, run from the scratch project. One pack and one
 * install for the whole file; npm installs from its cache where it can (--prefer-offline).
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const VERSION: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const MSW_VERSION: string = JSON.parse(readFileSync(join(ROOT, "node_modules/msw/package.json"), "utf8")).version;
const run = promisify(execFile);

const dir = mkdtempSync(join(tmpdir(), "sandbox-package-"));
const project = join(dir, "project");
let packed: { filename: string; files: { path: string }[] };

/** npm's own environment, without what an enclosing `npm test` set for this repository. */
function env(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_|^MERCHANT_SANDBOX_/i.test(k)));
}

beforeAll(async () => {
  const pack = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: ROOT, env: env() });
  [packed] = JSON.parse(pack.stdout);
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "scratch", private: true, type: "module" })}\n`);
  await run("npm", ["install", join(dir, packed.filename), `msw@${MSW_VERSION}`, "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: project,
    env: env(),
  });
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the packed tarball", () => {
  it("holds what runs, and nothing of the build or the tests: dist/ without maps or the unbundled CLI, the CLI, scenarios, both JSON Schemas, README, LICENSE", () => {
    const paths = packed.files.map((f) => f.path).sort();
    expect(packed.filename).toBe(`merchant-sandbox-${VERSION}.tgz`);
    for (const required of [
      "LICENSE",
      "README.md",
      "package.json",
      "dist/bin/main.js",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/adapters/msw.js",
      "dist/adapters/msw.d.ts",
      "dist/adapters/msw.d.cts",
      "dist/adapters/testcontainers.js",
      "dist/adapters/testcontainers.d.ts",
      "dist/ui/index.html",
      "dist/ui/app.js",
      "dist/ui/app.css",
      "scenarios/default.yaml",
      "scenarios/scenario.schema.json",
      "profiles/profile.schema.json",
    ]) {
      expect(paths).toContain(required);
    }
    const unexpected = paths.filter(
      (p) =>
        !/^(LICENSE|README\.md|package\.json|dist\/.+\.(js|d\.c?ts|html|css)|scenarios\/[a-z0-9-]+\.yaml|scenarios\/scenario\.schema\.json|profiles\/profile\.schema\.json)$/.test(
          p,
        ),
    );
    expect(unexpected).toEqual([]);
    expect(paths.filter((p) => /\.map$|^dist\/cli\/|\.build-|\.test\.|tsbuildinfo/.test(p))).toEqual([]);
  });

  it("npx merchant-sandbox --version prints the package's version", async () => {
    const { stdout, stderr } = await run("npx", ["merchant-sandbox", "--version"], { cwd: project, env: env() });
    expect(stdout).toBe(`${VERSION}\n`);
    expect(stderr.replace(/^npm warn .*\n/gm, "")).toBe("");
  });

  it("npx merchant-sandbox serve --port 0 answers /__sandbox/health 200, and stops", async () => {
    const npx: ChildProcess = spawn("npx", ["merchant-sandbox", "serve", "--port", "0"], {
      cwd: project,
      env: env(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<void>((resolve) => npx.on("exit", () => resolve()));
    try {
      let out = "";
      npx.stdout!.setEncoding("utf8");
      const url = await new Promise<string>((resolve, reject) => {
        npx.stdout!.on("data", (d: string) => {
          out += d;
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        void exited.then(() => reject(new Error(`npx merchant-sandbox serve exited before listening: ${out}`)));
      });
      const health = await fetch(`${url}/__sandbox/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok", version: VERSION, scenarios: ["default"] });

      // The process group, as a terminal's Ctrl-C or a CI runner does: npx runs the bin through
      // `sh -c`, so a signal to npx alone would not reach the server (see docs/release.md).
      process.kill(-npx.pid!, "SIGTERM");
      await exited;
      expect(await portClosed(url)).toBe("ECONNREFUSED");
    } finally {
      try {
        process.kill(-npx.pid!, "SIGKILL");
      } catch {
        // Stopped already.
      }
    }
  });

  it("the README's in-process snippet runs from the scratch project: createSandbox + createMswHandlers + setupServer, one token exchange", async () => {
    writeFileSync(
      join(project, "snippet.mjs"),
      [
        'import { setupServer } from "msw/node";',
        'import { createSandbox } from "merchant-sandbox";',
        'import { createMswHandlers } from "merchant-sandbox/msw";',
        "",
        'const sandbox = await createSandbox({ frozenAt: "2026-01-01T00:00:00Z" });',
        'const server = setupServer(...createMswHandlers(sandbox, { baseUrl: "https://api.merchant.test" }));',
        "server.listen();",
        "",
        'const res = await fetch("https://api.merchant.test/api/v2/auth/token", {',
        '  method: "POST",',
        '  headers: { "content-type": "application/json" },',
        '  body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),',
        "});",
        "const { access_token, ...rest } = await res.json();",
        'const { jti, ...claims } = JSON.parse(Buffer.from(access_token.split(".")[1], "base64url").toString());',
        "console.log(JSON.stringify({ status: res.status, ...rest, claims }));",
        "server.close();",
        "",
      ].join("\n"),
    );
    const { stdout } = await run(process.execPath, ["snippet.mjs"], { cwd: project, env: env() });
    const iat = Date.parse("2026-01-01T00:00:00Z") / 1000;
    expect(JSON.parse(stdout)).toEqual({
      status: 200,
      token_type: "Bearer",
      expires_in: 3600,
      claims: {
        iss: "https://merchant-sandbox.test",
        sub: "merchant_sandbox_default",
        aud: "merchant-api",
        iat,
        exp: iat + 3600,
        client_id: "sandbox-api-key",
        scope: "payment cashout",
      },
    });
  });
});

describe("the packed tarball in a CommonJS TypeScript project", () => {
  it('dual types: the README\'s msw snippet type-checks under module nodenext without "type": "module" (msw\'s CommonJS types on both sides) and runs, one token exchange', async () => {
    // A CommonJS project inside the scratch one (its node_modules): what `npm init -y` makes.
    const cjs = join(project, "cjs");
    mkdirSync(cjs);
    writeFileSync(join(cjs, "package.json"), `${JSON.stringify({ name: "scratch-cjs", private: true, type: "commonjs" })}\n`);
    writeFileSync(
      join(cjs, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "es2022",
          strict: true,
          // The snippet is what is checked; the declarations it reads are, where they meet it.
          skipLibCheck: true,
          outDir: "out",
          // Node's types from this repository: the scratch project installs no @types/node.
          typeRoots: [join(ROOT, "node_modules/@types")],
          types: ["node"],
        },
        files: ["snippet.ts"],
      }),
    );
    writeFileSync(
      join(cjs, "snippet.ts"),
      [
        'import { setupServer } from "msw/node";',
        'import { createSandbox } from "merchant-sandbox";',
        'import { createMswHandlers } from "merchant-sandbox/msw";',
        "",
        "// CommonJS has no top-level await: in a test file this is a beforeAll.",
        "async function main(): Promise<void> {",
        '  const sandbox = await createSandbox({ frozenAt: "2026-01-01T00:00:00Z" });',
        '  const server = setupServer(...createMswHandlers(sandbox, { baseUrl: "https://api.merchant.test" }));',
        "  server.listen();",
        '  const res = await fetch("https://api.merchant.test/api/v2/auth/token", {',
        '    method: "POST",',
        '    headers: { "content-type": "application/json" },',
        '    body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),',
        "  });",
        "  const { access_token: _, ...rest } = (await res.json()) as Record<string, unknown>;",
        "  console.log(JSON.stringify({ status: res.status, ...rest }));",
        "  server.close();",
        "}",
        "void main();",
        "",
      ].join("\n"),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const compiled = await run(process.execPath, [tsc, "-p", "."], { cwd: cjs, env: env() }).catch((e: { stdout: string }) => e);
    expect(compiled.stdout).toBe("");
    expect(readFileSync(join(cjs, "out/snippet.js"), "utf8")).toContain('require("merchant-sandbox/msw")');
    const { stdout } = await run(process.execPath, ["out/snippet.js"], { cwd: cjs, env: env() });
    expect(JSON.parse(stdout)).toEqual({ status: 200, token_type: "Bearer", expires_in: 3600 });
  }, 120_000);
});

/**
 * ECONNREFUSED once the server has closed its port, or what a connect got after a bounded number of
 * tries: npx can end before its child has (npx's shell dies at once, the server drains first).
 */
async function portClosed(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  let state = "";
  for (let attempt = 0; attempt < 500; attempt++) {
    state = await new Promise<string>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.on("connect", () => {
        socket.destroy();
        resolve("open");
      });
      socket.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    if (state !== "open") return state;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return state;
}
