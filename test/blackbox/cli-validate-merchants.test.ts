import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

/**
 * `merchant-sandbox validate` checks the login e-mail with the other values that select a merchant
 * (merchantIdentifiers): in one file and across files, placed at the e-mail itself.
 */

const dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-cli-validate-merchants-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const merchant = (id: string, email: string) =>
  `  - id: ${id}\n    api_key: ${id}-key\n    api_secret: ${id}-secret\n    payment_token: ${id}-pt\n    login: {email: ${email}, password: pw}\n`;

describe("merchant-sandbox validate, shared login e-mails", () => {
  it("two merchants of one file", async () => {
    const file = join(dir, "one-file.yaml");
    writeFileSync(file, `name: one-file\ndescription: d\nmerchants:\n${merchant("m1", "a@shop.test")}${merchant("m2", "A@shop.test")}`);
    const cli = runCli(["validate", file]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(`${file}:13:20: merchants[1].login.email: merchants[0] has the same login.email; each merchant needs its own\n`);
    expect(cli.stderr()).toBe("");
  });

  it("two files", async () => {
    const a = join(dir, "a.yaml");
    const b = join(dir, "b.yaml");
    writeFileSync(a, `name: a\ndescription: d\nmerchants:\n${merchant("ma", "same@shop.test")}`);
    writeFileSync(b, `name: b\ndescription: d\nmerchants:\n${merchant("mb", "Same@shop.test")}`);
    const cli = runCli(["validate", a, b]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(
      `${b}:8:20: merchants[0].login.email: login e-mail 'Same@shop.test' is already used by scenario 'a' (${a}); the credentials select the scenario, so each scenario needs its own\n${a}: ok (scenario 'a')\n`,
    );
    expect(cli.stderr()).toBe("");
  });
});
