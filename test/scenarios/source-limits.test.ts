import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEPTH_MESSAGE, SOURCE_LIMITS } from "../../src/core/source/source-limits.js";
import { loadProfileFile, parseProfileText, validateProfile } from "../../src/profiles/load.js";
import { loadScenarioFile, parseScenarioText, validateScenario } from "../../src/scenarios/load.js";
import { ONE_MERCHANT_SCENARIO } from "../support/scenario-text.js";

/**
 * The limits of a source file (scenario, profile): size, nesting depth and merchants. Past each,
 * one problem says what was seen, the limit and how to fix it, before the costly work starts (a
 * 100,000-deep file ran the stack out; 200,000 merchants took 32 s and 1.5 GB; a 40 MB profile
 * 20 s and 1.6 GB).
 */

const dir = mkdtempSync(join(tmpdir(), "merchant-sandbox-source-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function messageOf(load: () => unknown): string {
  try {
    load();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected it not to load");
}

/** A scenario whose one rule answers with `body`: its value is 5 levels in (document, rules, [0], then, respond). */
const withBody = (body: string) => `${ONE_MERCHANT_SCENARIO}rules:\n  - then:\n      respond:\n        status: 200\n        body: ${body}\n`;
const BODY_LINE = ONE_MERCHANT_SCENARIO.split("\n").length + 4;
const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

describe("source files: nesting depth", () => {
  it("no stack overflow: a 100,000-deep list in a scenario says it nests too deep, where, not 'Maximum call stack size exceeded'", () => {
    const message = messageOf(() => parseScenarioText(withBody(nested(100_000)), "deep.yaml"));
    expect(message).toMatch(new RegExp(`^deep\\.yaml:${BODY_LINE}:\\d+: ${DEPTH_MESSAGE.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
    expect(message).not.toContain("call stack");
  });

  it("no stack overflow: a 100,000-deep JSON object, and a 100,000-deep profile, the same", () => {
    const json = `{"name": "x", "description": "d", "merchants": [], "rules": [{"then": {"respond": {"status": 200, "body": ${'{"a": '.repeat(100_000)}1${"}".repeat(100_000)}}}}]}`;
    expect(messageOf(() => parseScenarioText(json, "deep.json"))).toMatch(
      /^deep\.json:1:\d+: this value nests mappings and lists more than 64 levels deep/,
    );
    expect(messageOf(() => parseProfileText(`name: acme\ntoken:\n  body: ${nested(100_000)}\n`, "deep-profile.yaml"))).toMatch(
      /^deep-profile\.yaml:3:\d+: this value nests mappings and lists more than 64 levels deep/,
    );
  });

  it(`the limit is ${SOURCE_LIMITS.maxDepth} levels: a body reaching level 64 loads, level 65 is refused at the collection that crosses it`, () => {
    expect(() => parseScenarioText(withBody(nested(64 - 5)), "ok.yaml")).not.toThrow();
    const column = "        body: ".length + 64 - 5 + 1;
    expect(messageOf(() => parseScenarioText(withBody(nested(65 - 5)), "x.yaml"))).toBe(`x.yaml:${BODY_LINE}:${column}: ${DEPTH_MESSAGE}`);
  });

  it("no stack overflow: objects given as data (createSandbox) are held to the same depth, at the path that crosses it", () => {
    let body: unknown = 1;
    for (let i = 0; i < 100_000; i++) body = { a: body };
    const scenario = {
      name: "deep",
      description: "d",
      merchants: [{ id: "m1", api_key: "k1", api_secret: "s1", payment_token: "p1" }],
      rules: [{ then: { respond: { status: 200, body } } }],
    };
    const path = `rules[0].then.respond.body${".a".repeat(64 - 5)}`;
    expect(messageOf(() => validateScenario(scenario, "createSandbox scenario"))).toBe(`createSandbox scenario:1:1: ${path}: ${DEPTH_MESSAGE}`);
    expect(messageOf(() => validateProfile({ name: "x", token: { body } }, "createSandbox profile"))).toBe(
      `createSandbox profile:1:1: token.body${".a".repeat(64 - 2)}: ${DEPTH_MESSAGE}`,
    );
  });
});

describe("source files: size", () => {
  it("bounded memory: a 50 MB scenario or profile file is refused by its size before it is read", () => {
    for (const [name, load, what] of [
      ["big-scenario.yaml", loadScenarioFile, "the scenario file"],
      ["big-profile.yaml", loadProfileFile, "the profile file"],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, "name: x\n");
      // Sparse: 50 MB on paper, nothing on disk; read, it would be 50 MB of NULs to parse.
      truncateSync(path, 50 * 1024 * 1024);
      expect(messageOf(() => load(path))).toBe(
        `${path}:1:1: ${what} is 52,428,800 bytes, more than the 1,048,576 bytes (1 MiB) a file may hold: split it into several files, or keep only what the tests use`,
      );
    }
  });

  it("text handed over directly meets the same limit, counted in UTF-8 bytes", () => {
    const text = `${ONE_MERCHANT_SCENARIO}# ${"é".repeat(600_000)}\n`;
    expect(messageOf(() => parseScenarioText(text, "x.yaml"))).toBe(
      `x.yaml:1:1: the file is ${Buffer.byteLength(text).toLocaleString("en-US")} bytes, more than the 1,048,576 bytes (1 MiB) a file may hold: split it into several files, or keep only what the tests use`,
    );
  });
});

describe("source files: merchants per scenario", () => {
  const merchant = (i: number) => `  - {id: m${i}, api_key: k${i}, api_secret: s${i}, payment_token: p${i}}`;
  const scenarioWith = (n: number) => `name: many\ndescription: d\nmerchants:\n${Array.from({ length: n }, (_, i) => merchant(i)).join("\n")}\n`;

  it("bounded cost: 2,000 merchants are refused with one problem before any is checked; 1,000 load", () => {
    expect(messageOf(() => parseScenarioText(scenarioWith(2000), "many.yaml"))).toBe(
      "many.yaml:4:3: merchants: the scenario has 2,000 merchants, more than the 1,000 one scenario may hold: split them into several scenario files, or make a session per test (POST /__sandbox/sessions), each with merchants of its own",
    );
    expect(parseScenarioText(scenarioWith(1000), "ok.yaml").merchants).toHaveLength(1000);
    expect(messageOf(() => parseScenarioText(scenarioWith(1001), "many.yaml"))).toMatch(
      /^many\.yaml:4:3: merchants: the scenario has 1,001 merchants/,
    );
  });
});
