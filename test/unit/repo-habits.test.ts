import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { installHooks } from "../../tools/git-hooks.mjs";

/**
 * The repository's habits, held by files: CI runs `.ci/run` on every push and pull request, and a
 * commit subject is at most 72 characters (the commit-msg hook, installed by `npm ci`'s prepare
 * step in the package's own clone only).
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const HOOK = join(ROOT, ".githooks/commit-msg");
/** git without the machine's own configuration, and with an author. */
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "repo-habits-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]) {
  return spawnSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" });
}

function hook(message: string) {
  const file = join(dir, "COMMIT_EDITMSG");
  writeFileSync(file, message);
  return spawnSync(HOOK, [file], { encoding: "utf8" });
}

describe("CI workflow (.github/workflows/ci.yml)", () => {
  it("runs .ci/run on every push and pull request", () => {
    const workflow = parse(readFileSync(join(ROOT, ".github/workflows/ci.yml"), "utf8"));
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push"]);
    expect(workflow.on.push).toBeNull();
    expect(workflow.on.pull_request).toBeNull();
    const steps = Object.values(workflow.jobs as Record<string, { steps: { run?: string }[] }>).flatMap((job) => job.steps);
    expect(steps.map((step) => step.run).filter(Boolean)).toEqual(["bash .ci/run"]);
  });
});

describe("commit-msg hook (.githooks/commit-msg)", () => {
  const subject72 = `docs: ${"x".repeat(66)}`;

  it("is executable, so git runs it", () => {
    expect(statSync(HOOK).mode & 0o111).toBe(0o111);
  });

  it("accepts a subject of at most 72 characters, with a body of any length", () => {
    expect(subject72).toHaveLength(72);
    const run = hook(`${subject72}\n\n${"why ".repeat(100)}\n`);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
  });

  it("counts characters, not bytes: 72 accented letters pass", () => {
    expect(hook(`${"é".repeat(72)}\n`).status).toBe(0);
  });

  it("refuses a subject of 73 characters, saying why and how (the why goes in the body)", () => {
    const subject = `${subject72}y`;
    const file = join(dir, "COMMIT_EDITMSG");
    const run = hook(`${subject}\n\nbody\n`);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      `commit-msg: the subject is 73 characters, over the limit of 72:\n\n  ${subject}\n\n` +
        "Say what changed in at most 72 characters on the first line; put the why (and any figures) in the body,\n" +
        "after a blank line:\n\n" +
        "  jws: sign ES256 on the thread pool\n\n" +
        "  Over HTTP the event loop is the limit, not the CPU; see docs/performance.md.\n\n" +
        `The message is kept in ${file}: \`git commit -e -F ${file}\` edits it again.\n`,
    );
  });

  it("counts the first paragraph as git log --oneline shows it: a body without its blank line is refused", () => {
    const run = hook("jws: sign on the pool\nbecause over HTTP the event loop is the limit, not the machine's CPU\n");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("the subject is 90 characters");
    expect(run.stderr).toContain("Its first 2 lines count as one: git joins the lines before the first blank line into the subject.");
  });

  it("skips git's comment lines and leading blank lines, and stops at a verbose commit's scissors line", () => {
    const diff = `# ------------------------ >8 ------------------------\n${"+".repeat(200)}\n`;
    expect(hook(`\n# ${"c".repeat(200)}\n\nshort subject\n${diff}`).status).toBe(0);
  });

  it("stops a real git commit with a long subject and lets a short one through", () => {
    const repo = join(dir, "repo");
    mkdirSync(repo);
    expect(git(repo, "init", "-q").status).toBe(0);
    expect(git(repo, "config", "core.hooksPath", join(ROOT, ".githooks")).status).toBe(0);
    const long = git(repo, "commit", "-q", "--allow-empty", "-m", "x".repeat(73));
    expect(long.status).toBe(1);
    expect(long.stderr).toContain("commit-msg: the subject is 73 characters, over the limit of 72:");
    expect(git(repo, "rev-parse", "--verify", "-q", "HEAD").status).not.toBe(0);
    expect(git(repo, "commit", "-q", "--allow-empty", "-m", "short", "-m", "y".repeat(300)).status).toBe(0);
    expect(git(repo, "log", "--format=%s").stdout).toBe("short\n");
  });
});

describe("hook installation (tools/git-hooks.mjs, npm ci's prepare step)", () => {
  it("is the first part of the prepare script", () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(scripts.prepare).toMatch(/^node tools\/git-hooks\.mjs && /);
  });

  it("sets core.hooksPath to .githooks in the package's own clone", () => {
    expect(git(dir, "init", "-q").status).toBe(0);
    expect(installHooks(dir)).toBe(true);
    expect(git(dir, "config", "--local", "core.hooksPath").stdout).toBe(".githooks\n");
  });

  it("does nothing, silently, outside a git work tree (the tarball, the image)", () => {
    const run = spawnSync(process.execPath, [join(ROOT, "tools/git-hooks.mjs")], { cwd: dir, encoding: "utf8", env: GIT_ENV });
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe("");
    expect(installHooks(dir)).toBe(false);
  });

  it("leaves another project's hooks alone when installed inside its work tree", () => {
    expect(git(dir, "init", "-q").status).toBe(0);
    const nested = join(dir, "node_modules/merchant-sandbox");
    mkdirSync(nested, { recursive: true });
    expect(installHooks(nested)).toBe(false);
    expect(git(dir, "config", "--local", "core.hooksPath").status).toBe(1);
  });
});
