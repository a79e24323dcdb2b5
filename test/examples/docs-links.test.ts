import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { filesUnder } from "../support/snippets.js";

/**
 * Every relative link of the README, docs/ and examples/ leads somewhere: the file exists, and a
 * `#anchor` into a markdown page names one of its headings (GitHub's anchor of it). Links inside
 * code (fenced blocks, `spans`) are text, not links.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PAGES = ["README.md", ...filesUnder(ROOT, "docs"), ...filesUnder(ROOT, "examples")].filter(
  (f) => f.endsWith(".md") && !f.includes("node_modules"),
);

const withoutFences = (text: string) => text.replace(/^(```|~~~)[\s\S]*?^\1/gm, "");
const withoutCode = (text: string) => withoutFences(text).replace(/`[^`\n]*`/g, "");

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  return new Set([...withoutFences(readFileSync(file, "utf8")).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** The page's links that lead nowhere, each with why. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const m of withoutCode(readFileSync(join(ROOT, page), "utf8")).matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = m[1]!;
    if (/^[a-z]+:/i.test(link)) continue;
    const [path, anchor] = link.split("#");
    const target = path ? join(ROOT, dirname(page), path) : join(ROOT, page);
    if (!existsSync(target)) broken.push(`${link}: no such file`);
    else if (anchor && target.endsWith(".md") && !anchorsOf(target).has(anchor)) broken.push(`${link}: no heading with that anchor`);
  }
  return broken;
}

describe("relative links in the README, docs/ and examples/", () => {
  it("finds the pages, docs/deployment.md among them", () => {
    expect(PAGES).toContain("README.md");
    expect(PAGES).toContain("docs/deployment.md");
    expect(PAGES).toContain("examples/cluster/README.md");
  });

  it.each(PAGES)("%s: every relative link leads to a file, and every anchor to a heading", (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });
});
