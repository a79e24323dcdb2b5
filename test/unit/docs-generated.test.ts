import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_PAGES, renderDocPages, renderPage, TOC_MIN_LINES } from "../../tools/docs-pages.mjs";

/**
 * The pages of docs/ that are written from the code (tools/docs-pages.mjs: the serve flags, the
 * scenario keys and library, the error codes, the recorded bench run, the tables of contents) are
 * what `npm run docs` writes now. Renders from dist/, which the suite's global setup has just built.
 */
describe("generated docs pages", () => {
  const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

  it.each(renderDocPages())("$path is current (run `npm run docs` and commit the result)", ({ path, content }) => {
    expect(read(path), `${path} is stale: run \`npm run docs\` and commit the result`).toBe(content);
  });

  it("a page that lost the markers of a generated section is an error, not a stale page", () => {
    const page = read("docs/configuration.md").replace(/<!-- END GENERATED serve-flags -->/, "");
    expect(() => renderPage("docs/configuration.md", page)).toThrow(
      "docs/configuration.md: the markers of the generated section 'serve-flags' are missing; put them back",
    );
  });

  it(`every page of ${TOC_MIN_LINES} lines or more has a table of contents`, () => {
    for (const path of GENERATED_PAGES.filter((p) => p !== "docs/errors.md")) {
      const page = read(path);
      if (page.split("\n").length >= TOC_MIN_LINES) expect(page, path).toMatch(/<!-- START doctoc -->\n\*\*Contents\*\*\n\n- \[/);
    }
  });
});
