// Is dist/ the build of the sources as they are now? `npm start`, `npm ci` (prepare) and the test
// setup ask before building, so a build (~30 s) runs only when something it reads has changed.
//
// The build (`npm run build`) brackets itself with tools/build-stamp.mjs: `begin` empties dist/ and
// writes dist/.build-started, `done` renames it to dist/.build-stamp. The stamp's mtime is therefore
// the moment the build STARTED: a source saved while a build runs is newer than the stamp, and the
// next start builds again. A failed build leaves no stamp, so it is retried too.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const STAMP = "dist/.build-stamp";
export const STARTED = "dist/.build-started";

/**
 * What the build reads, relative to the package root. Folders are walked whole, and a folder's own
 * mtime counts: deleting or renaming a file changes it, so a removed source is rebuilt away.
 * - src/: the TypeScript compiled to dist/ and bundled into dist/bin/;
 * - ui/: the QA page, its build script and tsconfig (dist/ui/);
 * - tools/: the bundler configuration and these build scripts;
 * - package.json (scripts, version, exports), tsconfig.json and tsconfig.build.json (compiler
 *   options);
 * - package-lock.json and node_modules/.package-lock.json, which npm rewrites on every install that
 *   changes node_modules: the CLI bundle carries its dependencies.
 * Not inputs: scenarios/ and profiles/ (read at run time from the package folder), test/, bench/,
 * docs/.
 */
export const BUILD_INPUTS = [
  "src",
  "ui",
  "tools",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "node_modules/.package-lock.json",
];

/**
 * Why dist/ under `root` needs a build, or undefined when it is up to date: the first input found
 * modified at or after the stamp (at, not after: file systems with coarse timestamps round down).
 */
export function staleness(root) {
  const stamp = mtimeMs(join(root, STAMP));
  if (stamp === undefined) return `no complete build yet: ${STAMP} is missing`;
  for (const input of BUILD_INPUTS) {
    const newer = firstModifiedSince(root, input, stamp);
    if (newer !== undefined) return `${newer} changed since the last build`;
  }
  return undefined;
}

/** The first path under `rel` (itself, or any file or folder below) modified at or after `since`. */
function firstModifiedSince(root, rel, since) {
  const stat = statOrUndefined(join(root, rel));
  if (stat === undefined) return undefined;
  if (stat.mtimeMs >= since) return rel;
  if (!stat.isDirectory()) return undefined;
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
    const newer = firstModifiedSince(root, `${rel}/${entry.name}`, since);
    if (newer !== undefined) return newer;
  }
  return undefined;
}

function mtimeMs(path) {
  return statOrUndefined(path)?.mtimeMs;
}

function statOrUndefined(path) {
  try {
    return statSync(path);
  } catch (e) {
    if (e.code === "ENOENT") return undefined;
    throw e;
  }
}
