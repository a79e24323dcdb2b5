import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/config.js";
import { DEFAULT_MERCHANT, MerchantRegistry, rotateSecret, secretMatches, type MerchantInput } from "../../src/core/merchants.js";

function merchant(overrides: Partial<MerchantInput> = {}): MerchantInput {
  return {
    id: "m1",
    apiKey: "key-1",
    apiSecret: "secret-1",
    paymentToken: "mpt_test_1",
    login: { email: "one@shop.test", password: "pw-1" },
    ...overrides,
  };
}

function configErrorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("did not throw");
}

describe("MerchantRegistry", () => {
  it("indexes the default merchant by every credential", () => {
    const reg = new MerchantRegistry([DEFAULT_MERCHANT]);
    const m = reg.byKey("sandbox-api-key")!;
    expect(m).toEqual({
      id: "merchant_sandbox_default",
      name: "Sandbox Default Merchant",
      apiKey: "sandbox-api-key",
      apiSecret: "sandbox-api-secret",
      formerSecrets: [],
      paymentToken: "sandbox-payment-token",
      login: { email: "merchant@sandbox.test", password: "sandbox-password" },
      scopes: ["payment", "cashout"],
      disabled: false,
    });
    expect(reg.byPayment("sandbox-payment-token")).toBe(m);
    expect(reg.byLoginEmail("merchant@sandbox.test")).toBe(m);
    expect(reg.byLoginEmail("Merchant@Sandbox.TEST")).toBe(m);
    expect(reg.findById("merchant_sandbox_default")).toBe(m);
    expect(reg.all()).toEqual([m]);
  });

  it("answers undefined for unknown credentials", () => {
    const reg = new MerchantRegistry([DEFAULT_MERCHANT]);
    expect(reg.byKey("nope")).toBeUndefined();
    expect(reg.byKey("sandbox-api-secret")).toBeUndefined();
    expect(reg.byPayment("sandbox-api-key")).toBeUndefined();
    expect(reg.byLoginEmail("other@sandbox.test")).toBeUndefined();
    expect(reg.findById("m1")).toBeUndefined();
  });

  it("fills in the defaults: name = id, all scopes, enabled, no login", () => {
    const reg = new MerchantRegistry([merchant({ login: undefined })]);
    expect(reg.findById("m1")).toEqual({
      id: "m1",
      name: "m1",
      apiKey: "key-1",
      apiSecret: "secret-1",
      formerSecrets: [],
      paymentToken: "mpt_test_1",
      login: undefined,
      scopes: ["payment", "cashout"],
      disabled: false,
    });
  });

  it("rotateSecret keeps the last four rotated-away secrets as proof of identity, newest last", () => {
    const m = new MerchantRegistry([merchant()]).findById("m1")!;
    for (const next of ["s2", "s3", "s4", "s5", "s6"]) rotateSecret(m, next);
    rotateSecret(m, "s6"); // the same secret again is no rotation
    expect([m.apiSecret, m.formerSecrets]).toEqual(["s6", ["s2", "s3", "s4", "s5"]]);
  });

  it("keeps given scopes without duplicates, and disabled", () => {
    const reg = new MerchantRegistry([merchant({ scopes: ["payment", "payment"], disabled: true })]);
    expect(reg.findById("m1")!.scopes).toEqual(["payment"]);
    expect(reg.findById("m1")!.disabled).toBe(true);
    expect(new MerchantRegistry([merchant({ scopes: [] })]).findById("m1")!.scopes).toEqual([]);
  });

  it("copies the login, so later changes to the input do not leak in", () => {
    const input = merchant();
    const reg = new MerchantRegistry([input]);
    input.login!.email = "changed@shop.test";
    expect(reg.byLoginEmail("one@shop.test")!.id).toBe("m1");
  });

  it("two merchants side by side", () => {
    const reg = new MerchantRegistry([
      merchant(),
      merchant({ id: "m2", apiKey: "key-2", paymentToken: "mpt_test_2", login: { email: "two@shop.test", password: "pw-2" } }),
    ]);
    expect(reg.byKey("key-2")!.id).toBe("m2");
    expect(reg.byPayment("mpt_test_1")!.id).toBe("m1");
    expect(reg.all().map((m) => m.id)).toEqual(["m1", "m2"]);
  });

  describe("duplicates", () => {
    it.each<[string, Partial<MerchantInput>, string]>([
      ["id", { apiKey: "key-2", paymentToken: "mpt_test_2", login: undefined }, "two merchants share the same id 'm1'; each merchant needs its own"],
      [
        "api_key",
        { id: "m2", paymentToken: "mpt_test_2", login: undefined },
        "two merchants share the same api_key 'key-1'; each merchant needs its own",
      ],
      ["payment token", { id: "m2", apiKey: "key-2", login: undefined }, "two merchants share the same payment token; each merchant needs its own"],
      [
        "login e-mail (case-insensitive)",
        { id: "m2", apiKey: "key-2", paymentToken: "mpt_test_2", login: { email: "ONE@shop.test", password: "x" } },
        "two merchants share the same login e-mail 'ONE@shop.test'; each merchant needs its own",
      ],
    ])("refuses a shared %s", (_what, second, message) => {
      expect(configErrorOf(() => new MerchantRegistry([merchant(), merchant(second)]))).toBe(message);
    });

    it("the payment token clash does not name the token", () => {
      const message = configErrorOf(() => new MerchantRegistry([merchant(), merchant({ id: "m2", apiKey: "key-2" })]));
      expect(message).not.toContain("mpt_test_1");
    });

    it("a refused add leaves the registry as it was", () => {
      const reg = new MerchantRegistry([merchant()]);
      expect(() => reg.add(merchant({ id: "m2", apiKey: "key-2", paymentToken: "mpt_test_1", login: undefined }))).toThrow(ConfigError);
      expect(reg.findById("m2")).toBeUndefined();
      expect(reg.byKey("key-2")).toBeUndefined();
      expect(reg.byPayment("mpt_test_1")!.id).toBe("m1");
    });
  });

  describe("validation", () => {
    it.each(["id", "apiKey", "apiSecret", "paymentToken"] as const)("%s must be a non-empty string", (field) => {
      expect(configErrorOf(() => new MerchantRegistry([merchant({ [field]: "" })]))).toBe(
        `merchant '${field === "id" ? "" : "m1"}': ${field} must be a non-empty string`,
      );
      expect(configErrorOf(() => new MerchantRegistry([merchant({ [field]: 42 as unknown as string })]))).toBe(
        `merchant '${field === "id" ? 42 : "m1"}': ${field} must be a non-empty string`,
      );
    });

    it.each(["apiKey", "apiSecret", "paymentToken"] as const)("%s must not contain spaces or control characters", (field) => {
      for (const bad of ["a b", "a\tb", "a\nb", "a\u0000b", "a\u007fb"]) {
        expect(configErrorOf(() => new MerchantRegistry([merchant({ [field]: bad })]))).toBe(
          `merchant 'm1': ${field} must not contain spaces or control characters`,
        );
      }
    });

    it("a missing id is shown as '?'", () => {
      const { id: _id, ...rest } = merchant();
      expect(configErrorOf(() => new MerchantRegistry([rest as MerchantInput]))).toBe("merchant '?': id must be a non-empty string");
      expect(configErrorOf(() => new MerchantRegistry([null as unknown as MerchantInput]))).toBe("merchant '?': id must be a non-empty string");
    });

    it("refuses an unknown scope", () => {
      expect(configErrorOf(() => new MerchantRegistry([merchant({ scopes: ["payment", "refund" as "payment"] })]))).toBe(
        "merchant 'm1': scope 'refund' is not known; use payment and/or cashout",
      );
    });

    it.each([
      { email: "", password: "pw" },
      { email: "a@b.test", password: "" },
      { email: 1, password: "pw" },
      { email: "a@b.test", password: null },
    ])("refuses the login %j", (login) => {
      expect(configErrorOf(() => new MerchantRegistry([merchant({ login: login as unknown as MerchantInput["login"] })]))).toBe(
        "merchant 'm1': login needs a non-empty email and password",
      );
    });
  });

  it("setPaymentToken rotates the payment token and keeps the index in step", () => {
    const reg = new MerchantRegistry([merchant()]);
    const m = reg.findById("m1")!;
    reg.setPaymentToken(m, "mpt_test_rotated");
    expect(m.paymentToken).toBe("mpt_test_rotated");
    expect(reg.byPayment("mpt_test_1")).toBeUndefined();
    expect(reg.byPayment("mpt_test_rotated")).toBe(m);
  });
});

describe("secretMatches", () => {
  it("is true only for the same string", () => {
    expect(secretMatches("sandbox-api-secret", "sandbox-api-secret")).toBe(true);
    expect(secretMatches("", "")).toBe(true);
    expect(secretMatches("sandbox-api-secret", "sandbox-api-secreT")).toBe(false);
    expect(secretMatches("sandbox-api-secret", "sandbox-api-secret ")).toBe(false);
  });

  it("does not throw on different lengths or prefixes", () => {
    expect(secretMatches("sandbox", "sandbox-api-secret")).toBe(false);
    expect(secretMatches("sandbox-api-secret", "")).toBe(false);
    expect(secretMatches("", "x")).toBe(false);
  });

  it("compares code points, not a normalised form", () => {
    expect(secretMatches("caf\u00e9", "cafe\u0301")).toBe(false);
    expect(secretMatches("pässwörd", "pässwörd")).toBe(true);
  });
});
