import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { createSandbox } from "../../src/app/sandbox.js";

/**
 * The public library API is exactly what docs/in-process.md documents ("The library's API"): every
 * name each entry point of package.json's `exports` gives, types included (read from the built
 * declarations), and every member of the `Sandbox` type and of the object createSandbox returns.
 * An internal that shows up there is frozen for the users who start leaning on it.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY_POINTS = {
  "merchant-sandbox": "dist/index",
  "merchant-sandbox/msw": "dist/adapters/msw",
  "merchant-sandbox/express": "dist/adapters/express",
  "merchant-sandbox/testcontainers": "dist/adapters/testcontainers",
};

/** The names each bullet of a list names before its colon, under `heading` in the API section. */
function documented(heading: string): string[] {
  const page = readFileSync(join(ROOT, "docs/in-process.md"), "utf8");
  const section = page.slice(page.indexOf("## The library's API"));
  const start = section.indexOf(`${heading}`);
  expect(start, `docs/in-process.md lists ${heading}`).toBeGreaterThan(0);
  const list = section.slice(start).split("\n\n")[1] ?? "";
  return list
    .split(/\n(?=- )/)
    .flatMap((item) => [...(item.split("`:")[0] ?? "").matchAll(/`([A-Za-z_]\w*)/g)].map((m) => m[1] ?? ""))
    .sort();
}

const program = ts.createProgram(
  Object.values(ENTRY_POINTS).map((file) => join(ROOT, `${file}.d.ts`)),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true },
);
const checker = program.getTypeChecker();

function declaredExports(file: string) {
  const source = program.getSourceFile(join(ROOT, `${file}.d.ts`));
  if (source === undefined) throw new Error(`${file}.d.ts is missing: npm run build`);
  const module = checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`${file}.d.ts is not a module`);
  return checker.getExportsOfModule(module);
}

describe("the public API is what docs/in-process.md documents", () => {
  it.each(Object.entries(ENTRY_POINTS))("%s exports exactly the documented names, types included", async (entry, file) => {
    const names = declaredExports(file).map((symbol) => symbol.name);
    const heading = entry === "merchant-sandbox" ? "`merchant-sandbox` (" : `\`${entry}\`:`;
    expect(names.sort()).toEqual(documented(heading));
    // What a JavaScript user sees: the values among them, and no more.
    const runtime = Object.keys(await import(join(ROOT, `${file}.js`)));
    expect(runtime.every((name) => names.includes(name))).toBe(true);
  });

  it("the Sandbox type has exactly the documented members: no ring, ledger, tokens or merchants", () => {
    const sandbox = declaredExports(ENTRY_POINTS["merchant-sandbox"]).find((symbol) => symbol.name === "Sandbox");
    if (sandbox === undefined) throw new Error("Sandbox is not exported");
    const members = checker
      .getDeclaredTypeOfSymbol(sandbox)
      .getProperties()
      .map((p) => p.name);
    expect(members.sort()).toEqual(documented("A `Sandbox`:"));
  });

  it("the object createSandbox returns has no other string keys than the documented members", async () => {
    const sandbox = await createSandbox();
    expect(Object.keys(sandbox).sort()).toEqual(documented("A `Sandbox`:"));
  });
});
