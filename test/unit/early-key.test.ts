import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startEarlyKey } from "../../src/cli/early-key.js";
import { CLI } from "../support/cli.js";

/** `serve` starts generating its RSA start key before the rest of the CLI loads (early-key.ts). */

describe("startEarlyKey", () => {
  it("starts an RS256 key for serve with the default algorithm", async () => {
    const early = startEarlyKey(["serve", "--port", "0"]);
    expect(early?.alg).toBe("RS256");
    expect((await early!.key).alg).toBe("RS256");
  });

  it("starts nothing for another command, another algorithm or a configured key", () => {
    for (const args of [[], ["validate", "x.yaml"], ["serve", "--alg", "ES256"], ["serve", "--alg=HS256"], ["serve", "--signing-key", "k.pem"]]) {
      expect(startEarlyKey(args)).toBeUndefined();
    }
  });

  it("the bundled entry starts the key before it loads the program (built by test/support/build.ts)", () => {
    const entry = readFileSync(CLI, "utf8");
    const started = entry.indexOf("startEarlyKey(process.argv.slice(2))");
    const loaded = entry.search(/await import\("\.\/program-[^"]+\.js"\)/);
    expect(started).toBeGreaterThan(0);
    expect(loaded).toBeGreaterThan(started);
  });
});
