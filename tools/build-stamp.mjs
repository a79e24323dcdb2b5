// The first and last step of `npm run build` (see tools/build-freshness.mjs).
//   node tools/build-stamp.mjs begin   empties dist/ (no output of a deleted source survives into
//                                      the package) and notes when the build started;
//   node tools/build-stamp.mjs done    turns that note into dist/.build-stamp, keeping its mtime:
//                                      the build is complete, as of the moment it started.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { STAMP, STARTED } from "./build-freshness.mjs";

const root = new URL("..", import.meta.url);
const step = process.argv[2];

if (step === "begin") {
  rmSync(new URL("dist/", root), { recursive: true, force: true });
  mkdirSync(new URL("dist/", root), { recursive: true });
  writeFileSync(new URL(STARTED, root), "A build is running, or failed: dist/ is incomplete until `npm run build` ends.\n");
} else if (step === "done") {
  renameSync(new URL(STARTED, root), new URL(STAMP, root));
} else {
  console.error(`tools/build-stamp.mjs: expected 'begin' or 'done', got '${step ?? ""}'`);
  process.exit(2);
}
