import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseScenarioText, ScenarioLoadError } from "../../src/scenarios/load.js";
import { ONE_MERCHANT_SCENARIO } from "../support/scenario-text.js";

/**
 * A YAML key that is a list or a mapping is reported where the key is, and the yaml library never
 * gets to print its Node warning about stringifying it.
 */

const HEAD = ONE_MERCHANT_SCENARIO;

const FIX = "but a scenario's keys are names such as api_key or match; write the key as plain text";

function errorOf(text: string): string {
  try {
    parseScenarioText(text, "x.yaml");
  } catch (e) {
    if (e instanceof ScenarioLoadError) return e.message;
    throw e;
  }
  throw new Error("expected the text not to load");
}

let warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(w.message);
beforeEach(() => {
  warnings = [];
  process.on("warning", onWarning);
});
afterEach(() => {
  process.off("warning", onWarning);
  expect(warnings).toEqual([]);
});

describe("a collection as a key", () => {
  it("a flow mapping as a key, at the top level", () => {
    expect(errorOf(`${HEAD}{a: 1}: x\n`)).toBe(`x.yaml:8:1: this key is a mapping ('{a: 1}'), ${FIX}`);
  });

  it("a flow list as a key", () => {
    expect(errorOf(`${HEAD}[a, b]: x\n`)).toBe(`x.yaml:8:1: this key is a list ('[a, b]'), ${FIX}`);
  });

  it("an explicit key (? …), placed where the key starts", () => {
    expect(errorOf(`${HEAD}? [a, b]: 1\n`)).toBe(`x.yaml:8:3: this key is a mapping ('[a, b]: 1'), ${FIX}`);
    expect(errorOf(`${HEAD}? [a, b]\n: 1\n`)).toBe(`x.yaml:8:3: this key is a list ('[a, b]'), ${FIX}`);
  });

  it("inside a merchant, at the key's own line and column", () => {
    expect(errorOf(`${HEAD}    ? [a,\n       b]\n    : 1\n`)).toBe(`x.yaml:8:7: this key is a list ('[a, b]'), ${FIX}`);
  });

  it("an alias to a list used as a key", () => {
    expect(errorOf(`${HEAD}x: &k [a]\n*k : 1\n`)).toBe(`x.yaml:9:1: this key is a list ('*k'), ${FIX}`);
  });

  it("a long key is shortened in the message", () => {
    const key = `[${Array.from({ length: 30 }, (_, i) => `item${i}`).join(", ")}]`;
    expect(errorOf(`${HEAD}${key}: x\n`)).toBe(`x.yaml:8:1: this key is a list ('${key.slice(0, 40)}…'), ${FIX}`);
  });
});
