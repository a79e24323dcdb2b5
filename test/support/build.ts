import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * vitest globalSetup: `npm run build` (compile src/ to dist/, bundle the CLI into dist/bin/) once
 * before the tests, so the CLI tests always run the binary built from the code under test, never a
 * stale one.
 */
export default function build(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
}
