import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { keyNames } from "../../src/store/redis-layout.js";
import { LUA_SCRIPTS } from "../../src/store/lua/scripts.generated.js";

/**
 * The Redis store's scripts are written as .lua files (src/store/lua/), one per command with a
 * header naming its KEYS, ARGV and outputs; the store runs the module generated from them.
 */
describe("the Redis store's Lua scripts", () => {
  it("are generated from the .lua files as they are now (node tools/lua-scripts.mjs)", () => {
    const root = new URL("../..", import.meta.url);
    expect(() => execFileSync(process.execPath, ["tools/lua-scripts.mjs", "--check"], { cwd: root, stdio: "pipe" })).not.toThrow();
  });

  it("name only keys the layout makes, each script its own, in its header's order", () => {
    const names = Object.keys(keyNames("p:"));
    for (const [name, script] of Object.entries(LUA_SCRIPTS)) {
      for (const key of script.keys) expect(names, `${name} names ${key}`).toContain(key);
      const header = readFileSync(new URL(`../../src/store/lua/${name}-${script.keys.length}.lua`, import.meta.url), "utf8");
      expect(header).toContain(`KEYS[${script.keys.length}] ${script.keys[script.keys.length - 1]}`);
    }
    expect(Object.keys(LUA_SCRIPTS).sort()).toEqual(["commit", "open", "reap", "reseed", "settle", "sync"]);
  });

  it("include each helper once, with no include line left", () => {
    for (const script of Object.values(LUA_SCRIPTS)) {
      expect(script.lua).not.toContain("--@include");
      expect(script.lua.split("local function nowMicros").length).toBe(2);
    }
  });
});
