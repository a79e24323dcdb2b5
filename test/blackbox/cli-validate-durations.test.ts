import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { ONE_MERCHANT_SCENARIO } from "../support/scenario-text.js";

/**
 * `merchant-sandbox validate` on durations past their limits (issue 23 §11): `delay: 100000h`
 * passed and became a 1 ms timer, `retry_after: 1e30` sent `Retry-After: 1e+30`. Each is now a
 * problem line at its file:line:column, and the file does not validate.
 */

const dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-cli-validate-durations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXT = `${ONE_MERCHANT_SCENARIO}settings: {leeway: 2d}
rules:
  - then: {delay: 100000h}
  - then:
      respond: {status: 503, retry_after: 1e30}
  - then:
      respond: {status: 429, retry_after: 2.5}
`;

describe("merchant-sandbox validate, unbounded durations", () => {
  it("reports each duration past its limit, or not whole seconds for Retry-After, at its file:line:column, and exits 1", async () => {
    const file = join(dir, "durations.yaml");
    writeFileSync(file, TEXT);
    const cli = runCli(["validate", file]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(
      [
        `${file}:8:20: settings.leeway: must be at most 1d`,
        `${file}:10:19: rules[0].then.delay: must be at most 5m`,
        `${file}:12:43: rules[1].then.respond.retry_after: must be at most 1d (86400 seconds)`,
        `${file}:14:43: rules[2].then.respond.retry_after: must be whole seconds (the header carries an integer), such as 30s, 2m or 30`,
        "",
      ].join("\n"),
    );
    expect(cli.stderr()).toBe("");
  });
});
