import { execFile, spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parser as javaParser } from "@lezer/java";
import { parser as pythonParser } from "@lezer/python";
import { parseAllDocuments } from "yaml";
import { collectSnippets, type Snippet } from "../support/snippets.js";

/**
 * Every snippet the documentation shows still parses (issue 16): the fenced blocks of README.md,
 * docs/**\/*.md and examples/**\/*.md, and the example files. yaml with the `yaml` package (strict,
 * no duplicate keys), json with JSON.parse, sh/bash/shell with `bash -n`, js with `node --check`,
 * ts with tsc under NodeNext (all in one run; `merchant-sandbox` resolves to this package through
 * its "exports", as it does once installed). A ts block without an import continues the ts block
 * before it on the same page (compiled as one module). java and python with the Lezer grammars
 * CodeMirror uses (@lezer/java, @lezer/python: no JDK or Python needed), which mark every place the
 * grammar does not accept. A block with any other language tag
 * (text, console …) is deliberately not checked and listed as such; a block with no tag fails.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

const CHECKED = {
  yaml: "yaml",
  yml: "yaml",
  json: "json",
  sh: "sh",
  bash: "sh",
  shell: "sh",
  js: "js",
  javascript: "js",
  ts: "ts",
  typescript: "ts",
  java: "java",
  python: "python",
  py: "python",
} as const;
type Checker = (typeof CHECKED)[keyof typeof CHECKED];

/**
 * Blocks known not to pass, none today. An entry is expected to fail (`it.fails`): once its block
 * is fixed, its test fails and says to drop the entry; once the block is gone, it matches nothing.
 */
const KNOWN_BROKEN: Array<{ file: string; contains: string; why: string }> = [];

const snippets = collectSnippets(ROOT);
const checkerOf = (s: Snippet): Checker | undefined => CHECKED[s.lang as keyof typeof CHECKED];
const knownBroken = (s: Snippet) => KNOWN_BROKEN.find((k) => k.file === s.file && s.code.includes(k.contains));

let tmp: string;
/** tsc's errors per ts snippet (by `where`). */
let tsErrors: Map<string, string[]>;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "snippets-"));
  tsErrors = await compileTs(snippets.filter((s) => checkerOf(s) === "ts"));
}, 180_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** One tsc run over every ts snippet, in a scratch project whose node_modules holds this package by its name. */
async function compileTs(blocks: Snippet[]): Promise<Map<string, string[]>> {
  const modules = join(tmp, "node_modules");
  await writeFile(join(tmp, "package.json"), JSON.stringify({ type: "module" }));
  await rm(modules, { recursive: true, force: true });
  await import("node:fs/promises").then((fs) => fs.mkdir(modules));
  for (const entry of await readdir(join(ROOT, "node_modules"))) await symlink(join(ROOT, "node_modules", entry), join(modules, entry));
  await symlink(ROOT, join(modules, "merchant-sandbox"));
  await writeFile(
    join(tmp, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2022", "DOM"],
        types: ["node"],
        strict: true,
        skipLibCheck: true,
        noEmit: true,
      },
      include: ["*.ts"],
    }),
  );
  // Units: a block with an import starts one; a block without continues the page's last unit.
  const units: Array<{ name: string; parts: Array<{ where: string; from: number; to: number }>; code: string }> = [];
  const lastUnitOf = new Map<string, (typeof units)[number]>();
  for (const block of blocks) {
    const continues = !/^\s*import\s/m.test(block.code) ? lastUnitOf.get(block.file) : undefined;
    const unit = continues ?? { name: `unit-${units.length}.ts`, parts: [], code: "" };
    if (!continues) units.push(unit);
    const from = unit.code.split("\n").length;
    unit.code += block.code;
    unit.parts.push({ where: block.where, from, to: unit.code.split("\n").length - 1 });
    lastUnitOf.set(block.file, unit);
  }
  for (const unit of units) await writeFile(join(tmp, unit.name), unit.code);
  const errors = new Map<string, string[]>(blocks.map((b) => [b.where, []]));
  if (units.length === 0) return errors;
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const out = await run(process.execPath, [tsc, "-p", join(tmp, "tsconfig.json"), "--pretty", "false"], { cwd: tmp }).then(
    (r) => r.stdout,
    (e: { stdout: string }) => e.stdout,
  );
  for (const m of out.matchAll(/^(unit-\d+\.ts)\((\d+),(\d+)\): (error TS\d+: .*)$/gm)) {
    const unit = units.find((u) => u.name === m[1])!;
    const line = Number(m[2]);
    const part = unit.parts.find((p) => line >= p.from && line <= p.to) ?? unit.parts.at(-1)!;
    const blockLine = Number(part.where.split(":").pop());
    errors.get(part.where)!.push(`line ${blockLine + line - part.from + 1}: ${m[4]}`);
  }
  // An error tsc printed that no unit claims (a bad tsconfig) fails every ts snippet.
  const unclaimed = out.split("\n").filter((l) => /error TS/.test(l) && !/^unit-\d+\.ts\(/.test(l));
  if (unclaimed.length > 0) for (const list of errors.values()) list.push(...unclaimed);
  return errors;
}

/** Where a Lezer grammar could not parse the block: its error nodes, as block lines. */
function grammarErrors(parser: typeof javaParser, s: Snippet): string[] {
  const errors: string[] = [];
  parser.parse(s.code).iterate({
    enter(node) {
      if (!node.type.isError) return;
      const line = s.code.slice(0, node.from).split("\n").length;
      errors.push(`line ${s.line + line}: the grammar does not accept ${JSON.stringify(s.code.slice(node.from, node.from + 30))}`);
    },
  });
  return errors;
}

async function problemsOf(s: Snippet): Promise<string[]> {
  switch (checkerOf(s)) {
    case "yaml":
      return parseAllDocuments(s.code, { strict: true, uniqueKeys: true, prettyErrors: true }).flatMap((doc) =>
        "errors" in doc ? [...doc.errors, ...doc.warnings].map((e) => e.message) : [],
      );
    case "json":
      try {
        JSON.parse(s.code);
        return [];
      } catch (e) {
        return [(e as Error).message];
      }
    case "sh": {
      const r = spawnSync("bash", ["-n"], { input: s.code, encoding: "utf8" });
      return r.status === 0 ? [] : [r.stderr.trim()];
    }
    case "js": {
      const file = join(tmp, `${s.where.replace(/[^\w]+/g, "_")}.mjs`);
      await writeFile(file, s.code);
      const r = spawnSync(process.execPath, ["--check", file], { encoding: "utf8" });
      return r.status === 0 ? [] : [r.stderr.trim()];
    }
    case "ts":
      return tsErrors.get(s.where)!;
    case "java":
      return grammarErrors(javaParser, s);
    case "python":
      return grammarErrors(pythonParser, s);
    default:
      return s.lang === "" ? ["the block has no language: tag it with its language, or ```text if it is not code"] : [];
  }
}

describe("every snippet of the README, docs/ and examples/ still parses", () => {
  it("finds the snippets (and lists what it checks)", () => {
    const lines = snippets.map(
      (s) => `${s.where} ${s.lang || "(untagged)"}: ${checkerOf(s) ? "checked" : s.lang ? "not checked (tagged)" : "untagged"}`,
    );
    console.log(`${snippets.length} snippets:\n${lines.join("\n")}`);
    expect(snippets.filter((s) => s.file === "README.md" && checkerOf(s)).length).toBeGreaterThan(0);
    for (const file of [
      "examples/docker-compose.yml",
      "examples/github-actions/merchant-api.yml",
      "examples/gitlab-ci/.gitlab-ci.yml",
      "examples/cluster/docker-compose.yml",
      "examples/kubernetes/merchant-sandbox.yaml",
    ]) {
      expect(snippets.map((s) => s.where)).toContain(file);
    }
  });

  for (const s of snippets) {
    const broken = knownBroken(s);
    const name = `${s.where} (${s.lang || "untagged"})${broken ? ` is still broken: ${broken.why}` : ""}`;
    (broken ? it.fails : it)(name, async () => {
      expect(await problemsOf(s)).toEqual([]);
    });
  }

  it("the express snippet of examples/README.md mounts merchant-sandbox/express under a prefix with no cast, and compiles under NodeNext", () => {
    const express = snippets.filter(
      (s) => s.file === "examples/README.md" && checkerOf(s) === "ts" && s.code.includes('from "merchant-sandbox/express"'),
    );
    expect(express).toHaveLength(1);
    expect(express[0]!.code).toContain('app.use("/merchant", sandboxMiddleware(');
    expect(express[0]!.code).not.toMatch(/\sas\s/);
    expect(tsErrors.get(express[0]!.where)).toEqual([]);
  });
});
