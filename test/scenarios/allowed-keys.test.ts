import { describe, expect, it } from "vitest";
import { allowedKeysAt } from "../../src/scenarios/allowed-keys.js";
import { matchSchema, merchantSchema, scenarioSchema, settingsSchema, thenSchema } from "../../src/scenarios/schema.js";

/** The keys an "unknown key" message lists come from the schema, never from a second list. */

describe("allowedKeysAt", () => {
  it("is the schema's keys at each place of a scenario, through lists, optionals and unions", () => {
    expect(allowedKeysAt([])).toEqual(Object.keys(scenarioSchema.shape));
    expect(allowedKeysAt(["merchants", 3])).toEqual(Object.keys(merchantSchema.shape));
    expect(allowedKeysAt(["merchants", 0, "login"])).toEqual(["email", "password"]);
    expect(allowedKeysAt(["settings"])).toEqual(Object.keys(settingsSchema.shape));
    expect(allowedKeysAt(["rules", 0])).toEqual(["name", "description", "match", "then"]);
    expect(allowedKeysAt(["rules", 1, "match"])).toEqual(Object.keys(matchSchema.shape));
    expect(allowedKeysAt(["rules", 1, "match", "calls"])).toEqual(["nth", "from", "times"]);
    expect(allowedKeysAt(["rules", 1, "match", "clock"])).toEqual(["after", "before"]);
    expect(allowedKeysAt(["rules", 2, "then"])).toEqual(Object.keys(thenSchema.shape));
    expect(allowedKeysAt(["rules", 2, "then", "respond"])).toEqual(["status", "headers", "body", "retry_after"]);
    expect(allowedKeysAt(["rules", 2, "then", "issue_token"])).toEqual(["expired", "not_before"]);
    expect(allowedKeysAt(["rules", 2, "then", "rotate_signing_key"])).toEqual(["keep_old"]);
  });

  it("nothing where the schema has no mapping", () => {
    expect(allowedKeysAt(["merchants"])).toEqual([]);
    expect(allowedKeysAt(["name"])).toEqual([]);
    expect(allowedKeysAt(["nope", "deeper"])).toEqual([]);
    expect(allowedKeysAt(["merchants", "x"])).toEqual([]);
    expect(allowedKeysAt(["rules", 0, "then", "respond", "headers"])).toEqual([]);
  });
});
