import { describe, expect, it } from "vitest";
import { type Merchant, type MerchantInput, MerchantRegistry, merchantState } from "../../src/core/merchants.js";
import { redactValue } from "../../src/core/redact.js";

/**
 * A merchant's mutable fields as replicas share them: restored into another registry's copy of the
 * merchant, with the redaction and the log scan as after the same changes made there.
 */

const INPUT: MerchantInput = {
  id: "m1",
  apiKey: "key-1",
  apiSecret: "secret-declared-1",
  paymentToken: "mpt_test_declared_1",
  login: { email: "one@shop.test", password: "password-1" },
};

const ROTATED = Array.from({ length: 6 }, (_, i) => `rotated-secret-${i}-abcdef`);

function copies(): { regA: MerchantRegistry; a: Merchant; regB: MerchantRegistry; b: Merchant } {
  const regA = new MerchantRegistry([INPUT]);
  const regB = new MerchantRegistry([INPUT]);
  return { regA, a: regA.findById("m1")!, regB, b: regB.findById("m1")! };
}

/** What each registry redacts and which secrets' owners its log scan finds, in one text holding every secret used. */
function seen(reg: MerchantRegistry): { redacted: string; found: string[] } {
  const text = [INPUT.apiSecret, ...ROTATED, INPUT.paymentToken, "mpt_test_new_token_1"].join(" ");
  const found: string[] = [];
  reg.fingerprints.find(text, (offset, owner) => found.push(`${offset}:${owner.kind}:${owner.merchant}`));
  return { redacted: redactValue(text, reg.secrets.view()), found };
}

describe("merchant state", () => {
  it("restored after rotations, it holds, redacts and remembers the same secrets as the original", () => {
    const { regA, a, regB, b } = copies();
    for (const secret of ROTATED) regA.setApiSecret(a, secret);
    regA.setPaymentToken(a, "mpt_test_new_token_1");
    a.disabled = true;
    a.paymentTokenState = "revoked";
    const json = JSON.stringify(merchantState(a));
    expect(JSON.parse(json)).toEqual({
      id: "m1",
      apiSecret: ROTATED[5],
      formerSecrets: ROTATED.slice(1, 5),
      paymentToken: "mpt_test_new_token_1",
      disabled: true,
      paymentTokenState: "revoked",
    });
    regB.restoreMerchant(b, JSON.parse(json));
    expect(JSON.stringify(merchantState(b))).toBe(json);
    expect(seen(regB).redacted).toBe(seen(regA).redacted);
    // The log scan remembers the secrets a replica saw: the one rotated in and out between two
    // restores was never here (the step-by-step test below sees them all).
    const first = `${INPUT.apiSecret.length + 1}:api_secret:m1`;
    expect(seen(regA).found).toContain(first);
    expect(seen(regB).found).toEqual(seen(regA).found.filter((f) => f !== first));
    // The declared secret and the first rotated one were rotated out: no longer redacted, on both.
    const words = seen(regB).redacted.split(" ");
    expect(words.slice(0, 2)).toEqual([INPUT.apiSecret, ROTATED[0]]);
    expect(words.slice(2).some((w) => w.includes("secret"))).toBe(false);
    expect([regB.byPayment("mpt_test_new_token_1"), regB.byPayment(INPUT.paymentToken)]).toEqual([b, undefined]);
  });

  it("step by step, a replica following the original's changes stays in step with it", () => {
    const { regA, a, regB, b } = copies();
    for (const secret of ROTATED) {
      regA.setApiSecret(a, secret);
      regB.restoreMerchant(b, merchantState(a));
      expect(seen(regB)).toEqual(seen(regA));
    }
    a.disabled = false;
    delete a.paymentTokenState;
    b.paymentTokenState = "expired";
    regB.restoreMerchant(b, merchantState(a));
    expect(b.paymentTokenState).toBeUndefined();
    expect("paymentTokenState" in b).toBe(false);
  });

  it("refuses a state that is not this merchant's, saying what is wrong, and leaves the merchant as it was", () => {
    const { regA, a, regB, b } = copies();
    const good = merchantState(a);
    const before = JSON.stringify(merchantState(b));
    expect(() => regB.restoreMerchant(b, { ...good, id: "m2" })).toThrow(
      new TypeError("the state of merchant 'm1' is of merchant 'm2'; give what merchantState() returned"),
    );
    expect(() => regB.restoreMerchant(b, { ...good, formerSecrets: ["a", "b", "c", "d", "e"] })).toThrow(/holds more than 4 formerSecrets/);
    expect(() => regB.restoreMerchant(b, { ...good, disabled: "no" } as never)).toThrow(/needs disabled: true or false/);
    expect(() => regB.restoreMerchant(b, { ...good, paymentTokenState: "gone" } as never)).toThrow(/paymentTokenState other than/);
    expect(() => regA.restoreMerchant(b, good)).toThrow("merchant 'm1' is not in this registry; restore only merchants it holds");
    regB.add({ ...INPUT, id: "m2", apiKey: "key-2", paymentToken: "mpt_test_taken_2", login: undefined });
    expect(() => regB.restoreMerchant(b, { ...good, paymentToken: "mpt_test_taken_2" })).toThrow(
      "merchant 'm2' already holds the payment token the state of merchant 'm1' gives",
    );
    expect(JSON.stringify(merchantState(b))).toBe(before);
  });
});
