import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Measurements rot in comments: the code changes, the machine changes, and nobody reruns a figure
 * they cannot find. So µs, ms, MB and ratios that were measured live in docs/performance.md (or
 * docs/reliability.md's table), and the code keeps a pointer where a choice depends on them. Limits
 * and defaults ("16 KB, node's own", "64 KiB by default") are settings, not measurements, and stay.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Each comment line of `text` (a `//` comment's text, or a line inside a block comment), numbered. */
function commentLines(text: string): { line: number; text: string }[] {
  const found: { line: number; text: string }[] = [];
  let inBlock = false;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (inBlock || line.startsWith("/*")) {
      found.push({ line: index + 1, text: line });
      inBlock = !line.includes("*/");
      return;
    }
    const slash = raw.indexOf("// ");
    if (slash >= 0) found.push({ line: index + 1, text: raw.slice(slash) });
  });
  return found;
}

/** What a measured figure looks like: a time in µs, an approximate or ranged cost, a share or a ratio. */
const MEASURED = [
  /\d\s?µs\b/,
  /~\s?\d[\d.,]*\s?(?:ms|MB|GB|MiB)\b/,
  /(?<![\^\w])\d+\s?[-–]\s?\d+\s?ms\b/,
  /\d[\d.,]*\s?GB\b/,
  /\d+(?:\.\d+)?\s?% of (?:its |the )?(?:in-process )?(?:CPU|req)/,
  /~?\d+(?:\.\d+)?x\s(?:the|faster|slower|more|less)\b/,
  /\d+ times (?:dearer|faster|slower)/,
];

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

describe("figures live in docs, not in comments", () => {
  it("no src/ comment carries a measured figure (µs, ~ms, MB, %, ×): it goes to docs/performance.md", () => {
    const offenders = sourceFiles(join(ROOT, "src")).flatMap((file) =>
      commentLines(readFileSync(file, "utf8"))
        .filter(({ text }) => MEASURED.some((pattern) => pattern.test(text)))
        .map(({ line, text }) => `${relative(ROOT, file)}:${line}: ${text}`),
    );
    expect(offenders).toEqual([]);
  });

  it("every pointer from src/ to docs/performance.md#… names a heading of that page", () => {
    const page = readFileSync(join(ROOT, "docs/performance.md"), "utf8");
    const anchors = new Set([...page.matchAll(/^#{2,4} (.+)$/gm)].map((match) => slug(match[1] ?? "")));
    const pointers = sourceFiles(join(ROOT, "src")).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/docs\/performance\.md#([\w-]+)/g)].map((match) => ({
        file: relative(ROOT, file),
        anchor: match[1] ?? "",
      })),
    );
    expect(pointers.length).toBeGreaterThanOrEqual(10);
    expect(pointers.filter(({ anchor }) => !anchors.has(anchor))).toEqual([]);
  });
});

/**
 * The prose of docs/ that reads a recorded run quotes it: each req/s, ratio, time,
 * share and size there is a number of that run's file, so a figure from a run that was since
 * overwritten (or never recorded) shows up here, and a new recorded run asks for the prose again.
 */
const QUOTING_SECTIONS = [
  { page: "docs/performance.md", heading: "Where the targets are not met, and why", results: "bench/results/latest.md" },
  { page: "docs/performance.md", heading: "Met in this run", results: "bench/results/latest.md" },
  // Two runs side by side: the build before an issue's changes, and the recorded run after them.
  { page: "docs/performance.md", heading: "Before and after issue 35", results: "bench/results/before-issue-35.md bench/results/latest.md" },
  { page: "docs/performance.md", heading: "What this means for a test suite", results: "bench/results/latest.md" },
  { page: "docs/performance.md", heading: "Where a cheap request's time goes", results: "bench/results/cheap-request.md" },
  { page: "docs/performance.md", heading: "More than one process", results: "bench/results/cluster.md" },
  { page: "docs/performance.md", heading: "Where a replica's time goes on the Redis store", results: "bench/results/replica-profile.md" },
  { page: "docs/performance.md", heading: "Many sessions on the Redis store", results: "bench/results/shared-sessions.md" },
  { page: "docs/deployment.md", heading: "Sizing", results: "bench/results/cluster.md" },
  { page: "docs/deployment.md", heading: "How far one Redis goes", results: "bench/results/shared-sessions.md" },
  // A row of reliability.md's table (a heading starting "| " names the row by its first cell).
  { page: "docs/reliability.md", heading: "| bounded rendering |", results: "bench/results/amplification.md" },
];

/** Figures worked out from a recorded run's numbers rather than copied, with the working. */
const DERIVED = new Map([["9×", "the peers' start, 2,977 to 3,040 ms, ÷ the sandbox's 329 ms (latest.md)"]]);

/** A section of a page: from its `## ` heading to the next one; or, for a heading "| name |", that table row. */
function section(path: string, heading: string): string {
  const page = readFileSync(join(ROOT, path), "utf8");
  if (heading.startsWith("| ")) {
    const row = page.split("\n").find((line) => line.startsWith(heading));
    if (row === undefined) throw new Error(`${path} has no table row "${heading}"`);
    return row;
  }
  const start = page.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${path} has no section "## ${heading}"`);
  const end = page.indexOf("\n## ", start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

/** Every number of a text, as a number (1,234 and 0.70 read as 1234 and 0.7), dates left out. */
function numbersOf(text: string): Set<number> {
  const undated = text.replace(/\d{4}-\d\d-\d\d/g, "");
  return new Set([...undated.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((match) => Number(match[0].replaceAll(",", ""))));
}

describe("figures in the docs' reading of a run are that run's", () => {
  it.each(QUOTING_SECTIONS)("$page, $heading: every ×, µs, ms, %, MB, /s and per-request count is in $results", ({ page, heading, results }) => {
    const recorded = numbersOf(
      results
        .split(" ")
        .map((file) => readFileSync(join(ROOT, file), "utf8"))
        .join("\n"),
    );
    const figures = [
      ...section(page, heading).matchAll(/(\d[\d,]*(?:\.\d+)?)(?:\s?(?:×|µs|ms|%|MB|\/s)| (?:[a-z]+ ){1,2}per (?:request|protected call))/g),
    ];
    expect(figures.length).toBeGreaterThan(0);
    const unrecorded = figures
      .filter((match) => !DERIVED.has(match[0]) && !recorded.has(Number((match[1] ?? "").replaceAll(",", ""))))
      .map((match) => match[0]);
    expect(unrecorded).toEqual([]);
  });
});
