import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { staleness } from "../../tools/build-freshness.mjs";

/**
 * When `npm start`, `npm ci` (prepare) and the test setup build: only when an input of the build
 * is as new as the stamp or newer. Times are set with utimes, never waited for.
 */
const STAMP_AT = new Date("2026-01-01T12:00:00Z");
const BEFORE = new Date("2026-01-01T11:00:00Z");
const AFTER = new Date("2026-01-01T12:00:01Z");

let root: string;
const at = (rel: string, time: Date) => utimesSync(join(root, rel), time, time);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "build-freshness-"));
  mkdirSync(join(root, "src/core"), { recursive: true });
  mkdirSync(join(root, "dist"));
  writeFileSync(join(root, "src/core/a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "src/core/b.ts"), "export const b = 2;\n");
  writeFileSync(join(root, "package.json"), "{}\n");
  for (const rel of ["src/core/a.ts", "src/core/b.ts", "src/core", "src", "package.json"]) at(rel, BEFORE);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function stamp(): void {
  writeFileSync(join(root, "dist/.build-stamp"), "");
  at("dist/.build-stamp", STAMP_AT);
}

describe("build freshness (tools/build-freshness.mjs)", () => {
  it("is stale with no stamp: no build, or one that failed before its end", () => {
    writeFileSync(join(root, "dist/.build-started"), "");
    expect(staleness(root)).toBe("no complete build yet: dist/.build-stamp is missing");
  });

  it("is fresh when every input is older than the stamp", () => {
    stamp();
    expect(staleness(root)).toBeUndefined();
  });

  it("names the changed source when one is newer than the stamp", () => {
    stamp();
    at("src/core/b.ts", AFTER);
    expect(staleness(root)).toBe("src/core/b.ts changed since the last build");
  });

  it("counts a source saved in the same instant as the build started as changed", () => {
    stamp();
    at("package.json", STAMP_AT);
    expect(staleness(root)).toBe("package.json changed since the last build");
  });

  it("sees a deleted source through its folder's mtime", () => {
    stamp();
    rmSync(join(root, "src/core/b.ts"));
    expect(staleness(root)).toBe("src/core changed since the last build");
  });

  it("ignores what the build does not read (scenarios/, test/)", () => {
    stamp();
    mkdirSync(join(root, "scenarios"));
    writeFileSync(join(root, "scenarios/new.yaml"), "name: new\n");
    mkdirSync(join(root, "test"));
    expect(staleness(root)).toBeUndefined();
  });
});
