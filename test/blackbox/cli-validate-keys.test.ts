import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

/**
 * `merchant-sandbox validate` on a file whose key is a YAML list or mapping: one problem line at the
 * key, and nothing on stderr (the yaml library's Node "Warning:" used to be printed there).
 */

const dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-cli-validate-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXT = `name: s
description: d
merchants:
  - id: m1
    api_key: k1
    api_secret: s1
    payment_token: p1
    ? {a: 1}
    : x
? [a, b]: 1
`;

describe("merchant-sandbox validate, a collection as a key", () => {
  it("reports each such key at its file:line:column, exits 1, and prints no warning", async () => {
    const file = join(dir, "collection-keys.yaml");
    writeFileSync(file, TEXT);
    const cli = runCli(["validate", file]);
    expect(await cli.exited).toBe(1);
    const fix = "but a scenario's keys are names such as api_key or match; write the key as plain text";
    expect(cli.stdout()).toBe(`${file}:8:7: this key is a mapping ('{a: 1}'), ${fix}\n${file}:10:3: this key is a mapping ('[a, b]: 1'), ${fix}\n`);
    expect(cli.stderr()).toBe("");
    expect(cli.stderr()).not.toContain("Warning:");
  });
});

describe("merchant-sandbox validate, a scripted header the server owns", () => {
  it("refuses Content-Length and Transfer-Encoding in respond.headers at file:line:column and exits 1", async () => {
    const file = join(dir, "framing-headers.yaml");
    writeFileSync(
      file,
      `name: s\ndescription: d\nmerchants:\n  - {id: m1, api_key: k1, api_secret: s1, payment_token: p1}\nrules:\n  - then:\n      respond:\n        status: 200\n        headers: {Content-Length: "777", Transfer-Encoding: chunked}\n`,
    );
    const cli = runCli(["validate", file]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(
      `${file}:9:19: rules[0].then.respond.headers.Content-Length: 'Content-Length' cannot be scripted: the server sets it from the body. Remove it from the headers\n` +
        `${file}:9:42: rules[0].then.respond.headers.Transfer-Encoding: 'Transfer-Encoding' cannot be scripted: the server frames every answer with Content-Length. Remove it from the headers\n`,
    );
    expect(cli.stderr()).toBe("");
  });
});

describe("merchant-sandbox validate, a file nested 100,000 deep", () => {
  it("no stack overflow: says the value nests too deep, where, instead of 'Maximum call stack size exceeded', and exits 1", async () => {
    const file = join(dir, "deep.yaml");
    writeFileSync(
      file,
      `name: s\ndescription: d\nmerchants: []\nrules:\n  - then:\n      respond:\n        status: 200\n        body: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`,
    );
    const cli = runCli(["validate", file]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(
      `${file}:8:${"        body: ".length + 256 - 5 + 1}: this value nests mappings and lists more than 64 levels deep, the most a scenario, a profile or a session action may: flatten it\n`,
    );
    expect(cli.stderr()).toBe("");
  });
});
