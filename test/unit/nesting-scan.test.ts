import { describe, expect, it } from "vitest";
import { nestingPastLimit } from "../../src/core/source/nesting-scan.js";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LIBRARY_DIR } from "../../src/scenarios/library.js";

/**
 * The pre-scan that refuses a plainly over-nested scenario or profile before the YAML parser
 * recurses into it: it must catch every way of nesting (flow brackets, JSON, compact `- - -`,
 * indentation), and never count brackets that are only text.
 */

const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

describe("nestingPastLimit", () => {
  it("no stack overflow: flow lists, JSON objects, compact sequences and indented mappings past the limit are found, at the level that crosses it", () => {
    expect(nestingPastLimit(`a: ${nested(100_000)}\n`, 256)).toBe(3 + 255);
    expect(nestingPastLimit(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`, 256)).toBe(5 * 256 - 5);
    expect(nestingPastLimit(`${"- ".repeat(100_000)}x\n`, 256)).toBeDefined();
    const indented = Array.from({ length: 300 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n");
    expect(nestingPastLimit(`${indented} 1\n`, 256)).toBeDefined();
    // A flow list over many lines, with comments between its items.
    expect(nestingPastLimit(`a: ${"[ # c\n".repeat(300)}${"]".repeat(300)}\n`, 256)).toBeDefined();
  });

  it("brackets that are only text are not counted: in quotes, plain scalars, comments and block scalars", () => {
    const brackets = "[".repeat(1000);
    const texts = [
      `a: "${brackets}"\n`,
      `a: '${brackets}'\n`,
      `a: 'it''s ${brackets}'\n`,
      `a: "say \\"${brackets}\\""\n`,
      `a: x${brackets}\n`,
      `a: 1 # ${brackets}\n`,
      `a: |\n  ${brackets}\n  ${brackets}\nb: >\n  ${brackets}\n`,
      `a: [x, "${brackets}", '${brackets}']\n`,
      `- it's [ here\n- "${brackets}"\n`,
    ];
    for (const text of texts) expect(nestingPastLimit(text, 256), text.slice(0, 40)).toBeUndefined();
  });

  it("the library's scenarios nest far below the bound", () => {
    const files = readdirSync(LIBRARY_DIR).filter((f) => f.endsWith(".yaml"));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) expect(nestingPastLimit(readFileSync(join(LIBRARY_DIR, f), "utf8"), 12), f).toBeUndefined();
  });

  it("linear scan: 4 MiB of quotes, brackets and indicators is read once (each line, each quote, at most twice)", () => {
    const worst = `a: ${"x' [ ".repeat(1_000_000)}\n${"- ' ".repeat(1_000)}\n`;
    expect(nestingPastLimit(worst, 256)).toBeUndefined();
  });
});
