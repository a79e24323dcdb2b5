import { describe, expect, it } from "vitest";
import { loadTestcontainers } from "../../src/adapters/testcontainers-peer.js";

describe("merchant-sandbox/testcontainers without its peer dependency", () => {
  it("says to install testcontainers 11.x when it is missing", () => {
    const missing = Object.assign(new Error("Cannot find module 'testcontainers'"), { code: "MODULE_NOT_FOUND" });
    expect(() =>
      loadTestcontainers(() => {
        throw missing;
      }),
    ).toThrow(
      "merchant-sandbox/testcontainers needs the testcontainers package, and it is not installed: npm install --save-dev testcontainers@^11 (11.x runs on Node 20 and 22; 12.x needs Node 22.22 or later).",
    );
  });

  it("passes on why a release that is there failed to load", () => {
    const crash = new TypeError("Cannot read properties of undefined (reading 'bind')");
    expect(() =>
      loadTestcontainers(() => {
        throw crash;
      }),
    ).toThrow("and it failed to load (Cannot read properties of undefined (reading 'bind')): npm install --save-dev testcontainers@^11");
  });

  it("answers the package when it loads", () => {
    const module = loadTestcontainers();
    expect(typeof module.GenericContainer).toBe("function");
  });
});
