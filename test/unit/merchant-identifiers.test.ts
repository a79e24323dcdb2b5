import { describe, expect, it } from "vitest";
import { MerchantRegistry, merchantIdentifiers } from "../../src/core/merchants.js";
import { parseScenarioText, ScenarioLoadError } from "../../src/scenarios/load.js";

/**
 * The one merchant clash check: merchantIdentifiers says what selects a merchant, and the registry,
 * a scenario joining the sandbox and the loader (two merchants of one file) all check it.
 */

const M1 = { id: "m1", apiKey: "key-1", apiSecret: "s1", paymentToken: "mpt_1", login: { email: "One@Shop.test", password: "pw" } };

describe("merchantIdentifiers", () => {
  it("id, api_key, payment token and login e-mail (lower-cased to compare, as given to show; the token never shown)", () => {
    expect(merchantIdentifiers(M1)).toEqual([
      { name: "id", field: ["id"], value: "m1", shown: "id 'm1'" },
      { name: "api_key", field: ["api_key"], value: "key-1", shown: "api_key 'key-1'" },
      { name: "payment token", field: ["payment_token"], value: "mpt_1", shown: "payment token" },
      { name: "login e-mail", field: ["login", "email"], value: "one@shop.test", shown: "login e-mail 'One@Shop.test'" },
    ]);
  });

  it("skips what is not given", () => {
    expect(merchantIdentifiers({ apiKey: "k", login: {} }).map((i) => i.name)).toEqual(["api_key"]);
  });
});

describe("MerchantRegistry.clashWith", () => {
  const registry = new MerchantRegistry([M1, { id: "m2", apiKey: "key-2", apiSecret: "s2", paymentToken: "mpt_2" }]);

  it("names the first identifier already held, and its holder", () => {
    const clash = registry.clashWith({ id: "m3", apiKey: "key-2", paymentToken: "mpt_1" });
    expect(clash?.identifier.name).toBe("api_key");
    expect(clash?.holder.id).toBe("m2");
    expect(registry.clashWith({ id: "m3", login: { email: "ONE@shop.TEST" } })?.holder.id).toBe("m1");
  });

  it("nothing for a merchant of its own", () => {
    expect(registry.clashWith({ id: "m3", apiKey: "key-3", paymentToken: "mpt_3", login: { email: "three@shop.test" } })).toBeUndefined();
  });
});

describe("the loader checks the same identifiers between the merchants of one file", () => {
  it("a login e-mail two merchants share, whatever its case, is found where the second one says it", () => {
    const text = `name: s
description: d
merchants:
  - id: m1
    api_key: k1
    api_secret: s1
    payment_token: p1
    login: {email: a@shop.test, password: x}
  - id: m2
    api_key: k2
    api_secret: s2
    payment_token: p2
    login: {email: A@Shop.test, password: y}
`;
    let error: unknown;
    try {
      parseScenarioText(text, "x.yaml");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScenarioLoadError);
    expect((error as ScenarioLoadError).message).toBe(
      "x.yaml:13:20: merchants[1].login.email: merchants[0] has the same login.email; each merchant needs its own",
    );
  });
});
