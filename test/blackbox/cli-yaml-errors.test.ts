import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

/**
 * A scenario or profile file that is not valid YAML: one line, at the character to change, saying
 * how to change it. The parser alone points past the cause (an unclosed quote at the end of the
 * file, a key indented too far at the value above it) and gives one mistake several lines.
 */

const BROKEN: Record<string, { text: string; line: string }> = {
  "indented-too-far.yaml": {
    text: "name: broken\nmerchants:\n  - id: m1\n    api_key: k1\n      api_secret: s1\n",
    line: "5:7: 'api_secret' is indented further than 'api_key' above it, so it reads as part of that value; indent it to column 5 like 'api_key', or nest it under a key that ends with ':'",
  },
  "between-levels.yaml": {
    text: "name: broken\nmerchants:\n  - id: m1\n    api_key: k1\n  api_secret: s1\n",
    line: "5:3: 'api_secret' starts at column 3, between the keys at column 5 ('api_key', line 4) and column 1 ('merchants', line 2); indent it to the column of the keys it belongs with",
  },
  "unclosed-quote.yaml": {
    text: 'name: broken\ndescription: "an unclosed quote\nmerchants:\n  - id: m1\n    api_key: k1\nrules: []\n',
    line: '2:14: this "quoted" value is not closed on its line, so it runs on to the end of the file; add the closing " where the value ends',
  },
  "unclosed-quote.json": {
    text: '{\n  "name": "broken,\n  "merchants": []\n}\n',
    line: '2:11: this "quoted" value is not closed on its line, so it runs on over the lines after it; add the closing " where the value ends',
  },
  "tab.yaml": {
    text: "name: broken\nmerchants:\n  - id: m1\n\tapi_key: k1\n",
    line: "4:1: a tab indents this line, and YAML indents with spaces only; replace the tab with spaces",
  },
  "duplicate.yaml": {
    text: "name: broken\nmerchants:\n  - id: m1\n    api_key: k1\n    api_secret: s1\n    api_key: k2\n",
    line: "6:5: the key 'api_key' appears twice in the same mapping (first on line 4); keep one",
  },
  "unclosed-bracket.yaml": {
    text: "name: broken\nrules:\n  - match:\n      endpoint: [token, login\n    then:\n      respond: { status: 503 }\n",
    line: "4:17: this [ is never closed; add the ] after the list's last item",
  },
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ms-yaml-errors-"));
  for (const [name, { text }] of Object.entries(BROKEN)) writeFileSync(join(dir, name), text);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a YAML syntax error is one line at its cause", () => {
  it.each(Object.keys(BROKEN))("validate %s", async (name) => {
    const cli = runCli(["validate", join(dir, name)]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(`${join(dir, name)}:${BROKEN[name]!.line}\n`);
    expect(cli.stderr()).toBe("");
  });

  it("serve --scenario: the same line, nothing started, exit 2", async () => {
    const file = join(dir, "unclosed-quote.yaml");
    const cli = runCli(["serve", "--port", "0", "--scenario", file]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(`merchant-sandbox: the scenarios do not load, nothing was started:\n${file}:${BROKEN["unclosed-quote.yaml"]!.line}\n`);
  });

  it("serve --profile: the same line, nothing started, exit 2", async () => {
    const file = join(dir, "profile-indented.yaml");
    writeFileSync(file, "name: acme\ntoken:\n  body:\n    access_token: '{{access_token}}'\n      expires_in: 60\n");
    const cli = runCli(["serve", "--port", "0", "--profile", file]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(
      `merchant-sandbox: a response profile does not load, nothing was started:\n${file}:5:7: 'expires_in' is indented further than 'access_token' above it, so it reads as part of that value; indent it to column 5 like 'access_token', or nest it under a key that ends with ':'\n`,
    );
  });
});
