// `npm run build`, only when dist/ is missing or older than what the build reads
// (tools/build-freshness.mjs). The `prepare` script (so `npm ci`, `npm pack` and `npm publish` leave
// or pack a complete, current dist/), `npm start` (tools/start.mjs) and the test setup use it.
//
//   node tools/build-if-stale.mjs      exit 0 when dist/ is current or was built, else the build's code
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { staleness } from "./build-freshness.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Builds when stale. Resolves with 0 when dist/ is current (built now or before), or with the
 * build's exit code; a signal received meanwhile stops the whole build (tsc, esbuild) and resolves
 * with 128 + its number. `devDependencies` says what to do when the build tools are not installed
 * (`npm ci --omit=dev` in a clone): "skip" (prepare: nothing to build with, not an error) or "fail".
 */
export async function buildIfStale({ devDependencies = "fail" } = {}) {
  const reason = staleness(ROOT);
  if (reason === undefined) return 0;
  if (!buildToolsInstalled()) {
    const why = `dist/ needs a build (${reason}), but the build tools (typescript, esbuild) are not installed: run \`npm ci\` without --omit=dev`;
    if (devDependencies === "skip") {
      console.error(`merchant-sandbox: skipping the build: ${why}.`);
      return 0;
    }
    console.error(`merchant-sandbox: ${why}, then \`npm run build\`.`);
    return 1;
  }
  console.error(`merchant-sandbox: building dist/ (${reason}) …`);
  return runBuild();
}

function buildToolsInstalled() {
  const require = createRequire(new URL("../package.json", import.meta.url));
  try {
    require.resolve("typescript/package.json");
    require.resolve("esbuild/package.json");
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm run build` with the npm that runs this script (npm_execpath), in its own process group so a
 * stop signal reaches every process of the build, not only npm's shell (which would leave tsc
 * running, orphaned).
 */
function runBuild() {
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, "run", "--silent", "build"]] : ["npm", ["run", "--silent", "build"]];
  const build = spawn(command, args, {
    cwd: ROOT,
    stdio: "inherit",
    detached: process.platform !== "win32",
    shell: !npm && process.platform === "win32",
  });
  const stop = (signal) => {
    try {
      process.kill(process.platform === "win32" ? build.pid : -build.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, stop);
  return new Promise((resolve) => {
    build.on("error", (e) => {
      console.error(`merchant-sandbox: could not run \`npm run build\`: ${e.message}`);
      resolve(1);
    });
    build.on("exit", (code, signal) => {
      for (const s of signals) process.off(s, stop);
      resolve(code ?? 128 + (constants.signals[signal] ?? 0));
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exitCode = await buildIfStale({ devDependencies: process.argv.includes("--skip-without-dev-dependencies") ? "skip" : "fail" });
}
