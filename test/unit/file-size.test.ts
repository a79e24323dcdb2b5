import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Files with one job: a source file past MAX_LINES does several, and the next maintainer has to
 * read all of them to change one. Data tables are long by nature and may be.
 */
const MAX_LINES = 350;
const SRC = join(import.meta.dirname, "../../src");

/** Tables of data, not logic: every refusal code, and the OpenAPI prose and schemas of the control plane. */
const DATA_TABLES = new Set(["core/error-catalogue.ts", "control/openapi/control-operations.ts", "control/openapi/control-schemas.ts"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

function lineCount(file: string): number {
  const text = readFileSync(file, "utf8");
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

describe("small files: one job per src/ file", () => {
  it(`no src/ file but the data tables is over ${MAX_LINES} lines`, () => {
    const over = sourceFiles(SRC)
      .map((file) => ({ file: relative(SRC, file).split("\\").join("/"), lines: lineCount(file) }))
      .filter(({ file, lines }) => lines > MAX_LINES && !DATA_TABLES.has(file))
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(over).toEqual([]);
  });

  it("every data table named here still exists (a renamed one must not keep its exemption by accident)", () => {
    const files = new Set(sourceFiles(SRC).map((file) => relative(SRC, file).split("\\").join("/")));
    expect([...DATA_TABLES].filter((f) => !files.has(f))).toEqual([]);
  });
});
