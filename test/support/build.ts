import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * vitest globalSetup: compile src/ to dist/ once before the tests, so the CLI tests always run
 * the binary built from the code under test, never a stale one.
 */
export default function build(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const tsc = fileURLToPath(new URL("../../node_modules/typescript/bin/tsc", import.meta.url));
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
}
