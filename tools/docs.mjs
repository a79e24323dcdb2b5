// `npm run docs`: writes every generated page of docs/ (tools/docs-pages.mjs) from the built
// package; `--check` writes nothing and exits 1 naming the pages that are stale.
import { readFileSync, writeFileSync } from "node:fs";
import { renderDocPages } from "./docs-pages.mjs";

const check = process.argv.includes("--check");
const root = new URL("..", import.meta.url);
const stale = [];
for (const { path, content } of renderDocPages()) {
  const file = new URL(path, root);
  if (readFileSync(file, "utf8") === content) continue;
  stale.push(path);
  if (!check) writeFileSync(file, content);
}
if (check && stale.length > 0) {
  process.stderr.write(`Stale generated pages: ${stale.join(", ")}. Run \`npm run docs\` and commit the result.\n`);
  process.exit(1);
}
process.stdout.write(stale.length === 0 ? "docs: every generated page is up to date\n" : `docs: wrote ${stale.join(", ")}\n`);
