import { describe, expect, it } from "vitest";
import { loadTestcontainers } from "../../src/adapters/testcontainers-peer.js";

describe("merchant-sandbox/testcontainers without its peer dependency", () => {
  it("says to install testcontainers 11.x when it is missing", async () => {
    const missing = Object.assign(new Error("Cannot find package 'testcontainers'"), { code: "ERR_MODULE_NOT_FOUND" });
    await expect(loadTestcontainers(() => Promise.reject(missing))).rejects.toThrow(
      "merchant-sandbox/testcontainers needs the testcontainers package, and it is not installed: npm install --save-dev testcontainers@^11 (11.x runs on Node 20 and 22; 12.x needs Node 22.22 or later).",
    );
  });

  it("passes on why a release that is there failed to load", async () => {
    const crash = new TypeError("Cannot read properties of undefined (reading 'bind')");
    await expect(loadTestcontainers(() => Promise.reject(crash))).rejects.toThrow(
      "and it failed to load (Cannot read properties of undefined (reading 'bind')): npm install --save-dev testcontainers@^11",
    );
  });

  it("answers the package when it loads", async () => {
    const module = await loadTestcontainers();
    expect(typeof module.GenericContainer).toBe("function");
  });
});
