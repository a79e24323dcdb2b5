import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { NotFound } from "../../src/core/errors.js";
import { UiAssets } from "../../src/control/ui-assets.js";

/**
 * The QA page's files (src/control/ui-assets.ts): only its three names are ever read, from the
 * folder the build writes; a copy without them says how to build them; each is read once.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
/** A temp folder as a URL with its trailing slash, as UI_DIR is. */
function folder(files: Record<string, string> = {}): { path: string; url: URL } {
  const path = mkdtempSync(join(tmpdir(), "ui-assets-"));
  dirs.push(path);
  for (const [name, body] of Object.entries(files)) writeFileSync(join(path, name), body);
  return { path, url: pathToFileURL(`${path}/`) };
}

describe("UiAssets", () => {
  it("serves the three files with their content types, each read once", () => {
    const { path, url } = folder({ "index.html": "<p>page</p>", "app.js": "run()", "app.css": "p{}" });
    const assets = new UiAssets(url);
    expect(assets.get("index.html")).toEqual({ body: "<p>page</p>", contentType: "text/html; charset=utf-8" });
    expect(assets.get("app.js")).toEqual({ body: "run()", contentType: "text/javascript; charset=utf-8" });
    expect(assets.get("app.css")).toEqual({ body: "p{}", contentType: "text/css; charset=utf-8" });
    unlinkSync(join(path, "app.js"));
    expect(assets.get("app.js")).toEqual({ body: "run()", contentType: "text/javascript; charset=utf-8" });
    expect(UiAssets.names()).toEqual(["index.html", "app.js", "app.css"]);
  });

  it("throws the NotFound that says to run `npm run build` when the page was not built", () => {
    const assets = new UiAssets(folder().url);
    for (const name of UiAssets.names()) {
      let thrown: unknown;
      try {
        assets.get(name);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(NotFound);
      expect((thrown as NotFound).message).toBe(
        `The QA page is not built into this copy of merchant-sandbox (dist/ui/ has no ${name}): run \`npm run build\`, or use the package or image, which ship it.`,
      );
    }
  });

  it("gives undefined for any other name, and reads nothing: no path traversal", () => {
    // A real file beside the folder, that a traversal would reach.
    // In a parent folder of this test's own, so parallel runs never share the file.
    const parent = folder({ "ui-assets-secret.txt": "secret" }).path;
    const ui = join(parent, "ui");
    mkdirSync(ui);
    writeFileSync(join(ui, "index.html"), "<p>page</p>");
    const assets = new UiAssets(pathToFileURL(`${ui}/`));
    for (const name of [
      "../package.json",
      "..",
      "%2e%2e",
      "%2e%2e/package.json",
      "..%2fpackage.json",
      "../ui-assets-secret.txt",
      "/etc/passwd",
      "index.html/",
      "./index.html",
      "INDEX.HTML",
      "app.js.map",
      "",
      "constructor",
      "__proto__",
      "toString",
      "hasOwnProperty",
    ]) {
      expect(assets.get(name), name).toBeUndefined();
    }
  });
});
