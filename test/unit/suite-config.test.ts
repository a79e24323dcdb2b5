import { describe, expect, it } from "vitest";
import config from "../../vitest.config.js";

/**
 * The suite's own costs (docs/performance.md, "This project's test suite"): what keeps `npm test`
 * in minutes on a 2-core machine is configuration, so a change that drops it fails here rather than
 * as a slower suite nobody times.
 */
describe("suite cost: how the test run is set up", () => {
  it("per-file startup: files share one worker (isolate: false), not a new process and a new import of src/ each", () => {
    expect(config.test?.isolate).toBe(false);
  });

  it("key generation once per run: the key pool is made by globalSetup, after the build check", () => {
    expect(config.test?.globalSetup).toEqual(["test/support/build.ts", "test/support/key-pool.ts"]);
  });
});
