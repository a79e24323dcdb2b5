// The prepare step's first part: points git at the repository's hooks (.githooks/: commit-msg keeps
// subjects to 72 characters), with `git config core.hooksPath .githooks`, but only in the package's
// own clone. Anywhere else it does nothing and says nothing: no git, not a work tree (the tarball,
// the image), or a work tree whose root is not this package (installed inside another project,
// whose hooks are not ours to change).
//
//   node tools/git-hooks.mjs      always exit 0
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Sets core.hooksPath in `root`'s repository when `root` is its work tree's top; returns whether it did. */
export function installHooks(root) {
  const git = (...args) => execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  let top;
  try {
    top = git("rev-parse", "--show-toplevel");
  } catch {
    return false;
  }
  if (realpathSync(top) !== realpathSync(root)) return false;
  try {
    git("config", "core.hooksPath", ".githooks");
    return true;
  } catch {
    return false;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) installHooks(ROOT);
