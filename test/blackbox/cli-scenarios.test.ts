import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadScenarioFile } from "../../src/scenarios/load.js";
import { runCli, startCliServer, untilPrinted, type CliProcess } from "../support/cli.js";
import { freePort } from "../support/free-port.js";
import { LIBRARY } from "../support/library.js";
import { problem } from "../support/server.js";

/**
 * The scenario commands of the real binary: validate, scenarios, schema, and serve with
 * --scenario / --scenarios-dir.
 */

const LIBRARY_DIR = fileURLToPath(new URL("../../scenarios/", import.meta.url));
const NOT_STARTED = "merchant-sandbox: the scenarios do not load, nothing was started:";

const dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-cli-scenarios-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const scenarioText = (name: string, apiKey: string, extra = "") =>
  `name: ${name}\ndescription: ${name} for the CLI tests\nmerchants:\n  - id: m_${name.replace(/-/g, "_")}\n    api_key: ${apiKey}\n    api_secret: ${name}-secret\n    payment_token: ${name}-payment-token\n${extra}`;

const BAD = `name: bad
description: d
merchants:
  - id: m1
    api_sekret: x
rules:
  - match: {endpoint: tokn}
    then: {}
`;
const badLines = (f: string) => [
  `${f}:4:5: merchants[0].api_key: is required: a text`,
  `${f}:4:5: merchants[0].api_secret: is required: a text`,
  `${f}:4:5: merchants[0].payment_token: is required: a text`,
  `${f}:5:5: merchants[0].api_sekret: unknown key 'api_sekret'; did you mean 'api_secret'? (allowed here: id, name, api_key, api_secret, payment_token, login, scopes, disabled)`,
  `${f}:7:23: rules[0].match.endpoint: 'tokn' is not an endpoint; did you mean 'token'? (use one of: token, login, payment, cashout, payment-init, jwks, any)`,
  `${f}:8:11: rules[0].then: then needs at least one action`,
];

const exchange = (url: string, apiKey: string, apiSecret: string) =>
  fetch(`${url}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: apiKey, api_secret: apiSecret }),
  });

/** True when something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("merchant-sandbox validate", () => {
  it("exits 0 with one ok line per valid file", async () => {
    const outage = join(LIBRARY_DIR, "token-endpoint-outage.yaml");
    const mine = file("valid/mine.yaml", scenarioText("mine", "mine-key"));
    const json = file(
      "valid/other.json",
      JSON.stringify({ name: "other", description: "d", merchants: [{ id: "m_o", api_key: "other-key", api_secret: "s", payment_token: "p" }] }),
    );
    const cli = runCli(["validate", outage, mine, json]);
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toBe(`${outage}: ok (scenario 'token-endpoint-outage')\n${mine}: ok (scenario 'mine')\n${json}: ok (scenario 'other')\n`);
    expect(cli.stderr()).toBe("");
  });

  it("validates the whole library at once", async () => {
    const files = LIBRARY.map((n) => join(LIBRARY_DIR, `${n}.yaml`));
    const cli = runCli(["validate", ...files]);
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toBe(LIBRARY.map((n, i) => `${files[i]}: ok (scenario '${n}')\n`).join(""));
  });

  it("exits 1 with one line per problem for an invalid file, and still says which files are ok", async () => {
    const bad = file("invalid/bad.yaml", BAD);
    const mine = file("invalid/mine.yaml", scenarioText("mine", "mine-key"));
    const cli = runCli(["validate", bad, mine]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe([...badLines(bad), `${mine}: ok (scenario 'mine')`].join("\n") + "\n");
    expect(cli.stderr()).toBe("");
  });

  it("prints the file name as given on the command line", async () => {
    const bad = file("invalid/relative.yaml", BAD);
    const rel = relative(process.cwd(), bad);
    const cli = runCli(["validate", rel]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(badLines(rel).join("\n") + "\n");
  });

  it("exits 1 for a file that does not exist", async () => {
    const missing = join(dir, "missing.yaml");
    const cli = runCli(["validate", missing]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(`${missing}:1:1: cannot read the scenario file (no such file)\n`);
  });

  const clashA = file("clash/a.yaml", scenarioText("clash-a", "shared-key"));
  const clashB = file("clash/b.yaml", scenarioText("clash-b", "shared-key"));
  const clashLine = `${clashB}:5:14: merchants[0].api_key: api_key 'shared-key' is already used by scenario 'clash-a' (${clashA}); the credentials select the scenario, so each scenario needs its own`;

  it("exits 1 when two valid files share an api_key, naming both", async () => {
    const cli = runCli(["validate", clashA, clashB]);
    expect(await cli.exited).toBe(1);
    expect(lines(cli.stdout())[0]).toBe(clashLine);
  });

  it("reports the clash at the clashing file's api_key and does not call that file ok", async () => {
    const cli = runCli(["validate", clashA, clashB]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(`${clashLine}\n${clashA}: ok (scenario 'clash-a')\n`);
    expect(cli.stderr()).toBe("");
  });

  it("reports a shared payment token without showing it", async () => {
    const a = file("clash/pt-a.yaml", scenarioText("pt-a", "pt-a-key"));
    const b = file("clash/pt-b.yaml", scenarioText("pt-b", "pt-b-key").replace("pt-b-payment-token", "pt-a-payment-token"));
    const cli = runCli(["validate", a, b]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(
      `${b}:7:20: merchants[0].payment_token: payment token is already used by scenario 'pt-a' (${a}); the credentials select the scenario, so each scenario needs its own\n${a}: ok (scenario 'pt-a')\n`,
    );
  });

  it("refuses a single file that clashes with the built-in default, as serve does", async () => {
    const gamma = file("clash/gamma.yaml", scenarioText("gamma", "sandbox-api-key"));
    const serve = runCli(["serve", "--port", "0", "--scenario", gamma]);
    expect(await serve.exited).toBe(2);
    const cli = runCli(["validate", gamma]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(
      `${gamma}:5:14: merchants[0].api_key: api_key 'sandbox-api-key' is already used by scenario 'default' (built-in); the credentials select the scenario, so each scenario needs its own; to change the default merchant, name your scenario 'default'\n`,
    );
    expect(cli.stderr()).toBe("");
  });
});

describe("merchant-sandbox validate with very many problems (issue 10 §5)", () => {
  const ALLOWED_TOP = "(allowed here: $schema, name, description, merchants, settings, rules)";

  it("regression: 100,000 unknown keys printed 100,000 lines (over a minute); 40,000 (what a file under the 1 MiB limit holds) print the first 50 and say how many more", async () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `unknown_key_${i}: ${i}`);
    const f = file("many/unknown-keys.yaml", `${scenarioText("many-keys", "many-keys-key")}${keys.join("\n")}\n`);
    const cli = runCli(["validate", f]);
    expect(await cli.exited).toBe(1);
    const out = lines(cli.stdout());
    expect(out).toHaveLength(51);
    // The file's first 7 lines are the scenario; the unknown keys start on line 8, in file order.
    expect(out[0]).toBe(`${f}:8:1: unknown_key_0: unknown key 'unknown_key_0' ${ALLOWED_TOP}`);
    expect(out[49]).toBe(`${f}:57:1: unknown_key_49: unknown key 'unknown_key_49' ${ALLOWED_TOP}`);
    expect(out[50]).toBe(`${f}:58:1: and 39950 more problems from here on; fix the ones above and validate again`);
    expect(cli.stderr()).toBe("");
  }, 60_000); // a 1 MB file through a child process on a shared runner: a limit, not a figure

  it("regression: thousands of clashing merchants were each placed by parsing the file again; the first 50 are reported, then how many more", async () => {
    const merchant = (tag: string, i: number) =>
      `  - {id: m_${tag}_${i}, api_key: shared_${i}, api_secret: s_${tag}_${i}, payment_token: pt_${tag}_${i}}`;
    const scenario = (tag: string) =>
      `name: clash-${tag}\ndescription: d\nmerchants:\n${Array.from({ length: 60 }, (_, i) => merchant(tag, i)).join("\n")}\n`;
    const a = file("many/clash-a.yaml", scenario("a"));
    const b = file("many/clash-b.yaml", scenario("b"));
    const cli = runCli(["validate", a, b]);
    expect(await cli.exited).toBe(1);
    const out = lines(cli.stdout());
    expect(out).toHaveLength(52); // 50 clashes, "and 10 more", and a's "ok"
    expect(out[0]).toBe(
      `${b}:4:26: merchants[0].api_key: api_key 'shared_0' is already used by scenario 'clash-a' (${a}); the credentials select the scenario, so each scenario needs its own`,
    );
    expect(out[50]).toBe(`${b}:54:27: and 10 more clashes from here on; fix the ones above and validate again`);
    expect(out[51]).toBe(`${a}: ok (scenario 'clash-a')`);
  });
});

describe("merchant-sandbox scenarios", () => {
  const library = LIBRARY.map((n) => loadScenarioFile(join(LIBRARY_DIR, `${n}.yaml`)));

  it("lists every library scenario with its api_key and description", async () => {
    const cli = runCli(["scenarios"]);
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toBe(
      library.map((s) => `${s.name}  (api_key: ${s.merchants.map((m) => m.api_key).join(", ")})\n    ${s.description}\n`).join(""),
    );
    expect(lines(cli.stdout())).toHaveLength(2 * 17);
  });

  it("prints JSON with --json: 17 entries", async () => {
    const cli = runCli(["scenarios", "--json"]);
    expect(await cli.exited).toBe(0);
    const rows = JSON.parse(cli.stdout());
    expect(rows).toHaveLength(17);
    expect(rows).toEqual(
      library.map((s) => ({ name: s.name, description: s.description, api_keys: s.merchants.map((m) => m.api_key), source: "library" })),
    );
  });

  it("adds a folder's scenarios with --scenarios-dir, with their file", async () => {
    const extra = file("list/extra.yaml", scenarioText("extra", "extra-key"));
    const cli = runCli(["scenarios", "--json", "--scenarios-dir", join(dir, "list")]);
    expect(await cli.exited).toBe(0);
    const rows = JSON.parse(cli.stdout());
    expect(rows).toHaveLength(18);
    expect(rows[17]).toEqual({ name: "extra", description: "extra for the CLI tests", api_keys: ["extra-key"], source: extra });
  });
});

describe("merchant-sandbox schema", () => {
  it("prints the JSON Schema that is checked in as scenarios/scenario.schema.json", async () => {
    const cli = runCli(["schema"]);
    expect(await cli.exited).toBe(0);
    expect(JSON.parse(cli.stdout()), "scenarios/scenario.schema.json is out of date: run `npm run schema`").toEqual(
      JSON.parse(readFileSync(join(LIBRARY_DIR, "scenario.schema.json"), "utf8")),
    );
  });
});

describe("merchant-sandbox serve --scenario token-endpoint-outage", () => {
  let cli: CliProcess & { url: string };
  beforeAll(async () => {
    cli = await startCliServer(["--scenario", "token-endpoint-outage"]);
  });
  afterAll(() => {
    cli.child.kill("SIGKILL");
  });

  it("lists the scenario before the built-in default on the start line", () => {
    expect(lines(cli.stdout())[0]).toMatch(
      /^merchant-sandbox \d+\.\d+\.\d+ listening on http:\/\/127\.0\.0\.1:\d+ scenarios=token-endpoint-outage,default profile=oauth merchants=token-endpoint-outage-key,sandbox-api-key alg=RS256 token_ttl=3600s$/,
    );
  });

  it("plays the outage: two 503s with Retry-After 30 and x-sandbox-rule, then tokens; the default merchant is unaffected; the log names the rule", async () => {
    const detail =
      "Service Unavailable: simulated by scenario 'token-endpoint-outage', rule 'outage'. Retry after 30 seconds, as the Retry-After header says.";
    for (let i = 0; i < 2; i++) {
      const res = await exchange(cli.url, "token-endpoint-outage-key", "token-endpoint-outage-secret");
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("30");
      expect(res.headers.get("x-sandbox-rule")).toBe("token-endpoint-outage/outage");
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toEqual(
        problem(503, "Service Unavailable", "service_unavailable", detail, "/api/v2/auth/token", "temporarily_unavailable"),
      );
    }
    const third = await exchange(cli.url, "token-endpoint-outage-key", "token-endpoint-outage-secret");
    expect(third.status).toBe(200);
    expect(third.headers.get("x-sandbox-rule")).toBeNull();
    expect((await third.json()).token_type).toBe("Bearer");

    const other = await exchange(cli.url, "sandbox-api-key", "sandbox-api-secret");
    expect(other.status).toBe(200);

    // The log line of each: rules=<scenario>/<rule> for the requests a rule shaped, nothing for the
    // others (in this test, not the next: the four exchanges are this test's own).
    const tokenLinesOf = (out: string) => lines(out).filter((l) => l.includes(" POST /api/v2/auth/token "));
    await untilPrinted(cli, (out) => tokenLinesOf(out).length >= 4);
    const tokenLines = tokenLinesOf(cli.stdout());
    expect(tokenLines).toHaveLength(4);
    for (const l of tokenLines.slice(0, 2)) {
      expect(l).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z POST \/api\/v2\/auth\/token 503 \d+\.\dms merchant=m_token_endpoint_outage rules=token-endpoint-outage\/outage$/,
      );
    }
    expect(tokenLines[2]).toMatch(/^\S+ POST \/api\/v2\/auth\/token 200 \d+\.\dms merchant=m_token_endpoint_outage jti=[0-9a-f-]{36}$/);
    expect(tokenLines[3]).toMatch(/^\S+ POST \/api\/v2\/auth\/token 200 \d+\.\dms merchant=merchant_sandbox_default jti=[0-9a-f-]{36}$/);
  });
});

describe("merchant-sandbox serve with scenario files", () => {
  const teapot = `rules:
  - name: teapot
    match: {endpoint: token, calls: {nth: 1}}
    then:
      respond:
        status: 418
        headers: {x-custom: brewed}
        body: {merchant: "{{merchant.id}}", scenario: "{{scenario.name}}"}
`;

  it("loads a scenario by file path (relative, with ./)", async () => {
    const path = file("serve/teapot.yaml", scenarioText("teapot", "teapot-key", teapot));
    const rel = relative(process.cwd(), path);
    const cli = await startCliServer(["--scenario", rel.startsWith(".") ? rel : `./${rel}`]);
    try {
      expect(lines(cli.stdout())[0]).toMatch(/ scenarios=teapot,default profile=oauth merchants=teapot-key,sandbox-api-key /);
      const first = await exchange(cli.url, "teapot-key", "teapot-secret");
      expect(first.status).toBe(418);
      expect(first.headers.get("x-custom")).toBe("brewed");
      expect(first.headers.get("x-sandbox-rule")).toBe("teapot/teapot");
      expect(await first.json()).toEqual({ merchant: "m_teapot", scenario: "teapot" });
      expect((await exchange(cli.url, "teapot-key", "teapot-secret")).status).toBe(200);
      await untilPrinted(cli, (out) => / POST \/api\/v2\/auth\/token 418 .*\n/.test(out));
      expect(cli.stdout()).toMatch(/ POST \/api\/v2\/auth\/token 418 \d+\.\dms merchant=m_teapot rules=teapot\/teapot\n/);
    } finally {
      cli.child.kill("SIGKILL");
    }
  });

  it("loads every scenario file of --scenarios-dir (YAML and JSON), ignoring other files", async () => {
    const folder = join(dir, "suite");
    file("suite/b-second.yaml", scenarioText("second", "second-key"));
    file(
      "suite/a-first.json",
      JSON.stringify({
        name: "first",
        description: "d",
        merchants: [{ id: "m_first", api_key: "first-key", api_secret: "first-secret", payment_token: "first-pt" }],
      }),
    );
    file("suite/README.md", "not a scenario\n");
    const cli = await startCliServer(["--scenarios-dir", folder]);
    try {
      expect(lines(cli.stdout())[0]).toMatch(/ scenarios=first,second,default profile=oauth merchants=first-key,second-key,sandbox-api-key /);
      expect((await exchange(cli.url, "first-key", "first-secret")).status).toBe(200);
      expect((await exchange(cli.url, "second-key", "second-secret")).status).toBe(200);
      expect((await exchange(cli.url, "sandbox-api-key", "sandbox-api-secret")).status).toBe(200);
    } finally {
      cli.child.kill("SIGKILL");
    }
  });

  it("refuses an invalid file with exit 2, every problem on stderr, and binds nothing", async () => {
    const bad = file("serve/bad.yaml", BAD);
    const port = await freePort();
    const cli = runCli(["serve", "--port", String(port), "--scenario", bad]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe([NOT_STARTED, ...badLines(bad)].join("\n") + "\n");
    expect(cli.stdout()).toBe("");
    expect(await listening(port)).toBe(false);
  });

  it("refuses an invalid file in --scenarios-dir, even beside valid ones", async () => {
    const folder = join(dir, "mixed");
    file("mixed/good.yaml", scenarioText("good", "good-key"));
    const bad = file("mixed/bad.yaml", BAD);
    const cli = runCli(["serve", "--port", "0", "--scenarios-dir", folder]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe([NOT_STARTED, ...badLines(bad)].join("\n") + "\n");
    expect(cli.stdout()).toBe("");
  });

  it("refuses an unknown library name with exit 2 and the library's list", async () => {
    const cli = runCli(["serve", "--port", "0", "--scenario", "nope"]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(
      `${NOT_STARTED}\nnope:1:1: no scenario named 'nope' in the library; use a file path, or one of: ${LIBRARY.join(", ")}\n`,
    );
    expect(cli.stdout()).toBe("");
  });

  it("refuses two scenario files sharing an api_key with exit 2 and the clash", async () => {
    const a = file("serve/clash-a.yaml", scenarioText("clash-a", "shared-key"));
    const b = file("serve/clash-b.yaml", scenarioText("clash-b", "shared-key"));
    const cli = runCli(["serve", "--port", "0", "--scenario", a, "--scenario", b]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(
      `merchant-sandbox: scenario 'clash-b' (${b}) declares api_key 'shared-key', which scenario 'clash-a' (${a}) already uses; the credentials select the scenario, so each scenario needs its own\nRun 'merchant-sandbox serve --help' for the options.\n`,
    );
  });
});

describe("a reader that closes the pipe early", () => {
  // Regression test: `merchant-sandbox scenarios | head -1` crashed with an unhandled EPIPE.
  for (const args of [["scenarios"], ["schema"], ["validate", join(LIBRARY_DIR, "default.yaml")]]) {
    it(`${args[0]} exits 0 quietly when its stdout is closed before it writes`, async () => {
      const cli = runCli(args);
      cli.child.stdout!.destroy();
      expect(await cli.exited).toBe(0);
      expect(cli.stderr()).toBe("");
    });
  }
});
