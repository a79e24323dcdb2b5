import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * vitest globalSetup: build dist/ (compile src/, bundle the CLI into dist/bin/, the QA page) before
 * the tests when any input of the build changed since the last one (tools/build-if-stale.mjs), so
 * the CLI tests always run the binary built from the code under test, never a stale one, and a run
 * after `npm ci` (which builds) or an earlier run does not build again.
 */
export default function build(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  execFileSync(process.execPath, ["tools/build-if-stale.mjs"], { cwd: root, stdio: "inherit" });
}
