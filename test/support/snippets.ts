import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The code the documentation shows: fenced blocks of README.md, docs/**\/*.md and examples/**\/*.md,
 * and the example files themselves, each with where it is and the language it is checked as.
 */
export interface Snippet {
  /** `README.md:121`: the file and the line of the opening fence (1 for a whole file). */
  where: string;
  file: string;
  line: number;
  /** The fence's language, lower case ("" when the fence has none); a file's from its extension. */
  lang: string;
  code: string;
}

const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git"]);

/** Every file under `dir` (relative to `root`), dotfiles included, build output and dependencies not. */
export function filesUnder(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(join(root, at), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
      } else if (entry.isFile()) out.push(path);
    }
  };
  walk(dir);
  return out.sort();
}

/** The fenced code blocks of a markdown file (``` or ~~~, three or more, closed by the same run or longer). */
export function fencedBlocks(root: string, file: string): Snippet[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const blocks: Snippet[] = [];
  let open: { fence: string; lang: string; line: number; indent: number; body: string[] } | undefined;
  lines.forEach((text, i) => {
    const m = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)?.*$/.exec(text);
    if (!open) {
      if (m) open = { fence: m[2]!, lang: (m[3] ?? "").toLowerCase(), line: i + 1, indent: m[1]!.length, body: [] };
      return;
    }
    if (m && m[2]![0] === open.fence[0] && m[2]!.length >= open.fence.length && !m[3] && text.trim() === m[2]) {
      blocks.push({ where: `${file}:${open.line}`, file, line: open.line, lang: open.lang, code: open.body.join("\n") + "\n" });
      open = undefined;
      return;
    }
    const indent = open.indent;
    open.body.push(text.replace(new RegExp(`^ {0,${indent}}`), ""));
  });
  if (open) throw new Error(`${file}:${open.line}: a code fence is never closed`);
  return blocks;
}

const LANG_OF_EXTENSION: Record<string, string> = {
  yml: "yaml",
  yaml: "yaml",
  json: "json",
  sh: "sh",
  js: "js",
  mjs: "js",
  ts: "ts",
};

/** Every snippet the documentation and the examples hold. */
export function collectSnippets(root: string): Snippet[] {
  const markdown = ["README.md", ...filesUnder(root, "docs"), ...filesUnder(root, "examples")].filter((f) => f.endsWith(".md"));
  const fromMarkdown = markdown.flatMap((f) => fencedBlocks(root, f));
  const exampleFiles = filesUnder(root, "examples").flatMap((file) => {
    const lang = LANG_OF_EXTENSION[file.split(".").pop()!];
    return lang ? [{ where: `${file}`, file, line: 1, lang, code: readFileSync(join(root, file), "utf8") }] : [];
  });
  return [...fromMarkdown, ...exampleFiles].map((s) => ({ ...s, file: relative(".", s.file) || s.file }));
}
