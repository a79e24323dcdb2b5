import { inspect } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeyRing } from "../../src/core/keys.js";
import { MerchantRegistry } from "../../src/core/merchants.js";
import { FINGERPRINT_CHARS, MIN_SECRET_LENGTH, type SecretOwner, SecretFingerprints } from "../../src/core/secret-fingerprints.js";

/**
 * What the log scan remembers of secrets (issue 25 §2): keyed fingerprints, found in a text in
 * one pass, bounded in number, never the secret.
 */

function found(prints: SecretFingerprints, text: string, steps?: { count: number }): Array<[number, SecretOwner]> {
  const out: Array<[number, SecretOwner]> = [];
  prints.find(text, (offset, owner) => out.push([offset, owner]), steps);
  return out;
}

const owner = (merchant: string): SecretOwner => ({ kind: "api_secret", merchant });

describe("secret fingerprints", () => {
  it("finds what a search for each secret finds (its first FINGERPRINT_CHARS characters), held or ended", () => {
    const secret = fc.stringMatching(/^[ab-]{6,9}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(secret, { minLength: 1, maxLength: 8 }),
        fc.stringMatching(/^[ab\- ]{0,80}$/),
        fc.boolean(),
        (secrets, text, end) => {
          const prints = new SecretFingerprints();
          for (const [i, s] of secrets.entries()) prints.hold(s, owner(`m${i}`));
          if (end) for (const [i, s] of secrets.entries()) prints.release(s, owner(`m${i}`));
          const expected: Array<[number, SecretOwner]> = [];
          for (let at = 0; at < text.length; at++) {
            for (const [i, s] of secrets.entries()) if (text.startsWith(s, at)) expected.push([at, owner(`m${i}`)]);
          }
          expect(found(prints, text).sort((a, b) => a[0] - b[0] || a[1].merchant.localeCompare(b[1].merchant))).toEqual(
            expected.sort((a, b) => a[0] - b[0] || a[1].merchant.localeCompare(b[1].merchant)),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("a long secret is found by its first characters; a short one not at all", () => {
    const prints = new SecretFingerprints();
    const long = `L${"0123456789".repeat(10)}`;
    prints.hold(long, owner("m"));
    prints.hold("abcde", owner("short"));
    expect(found(prints, `x ${long.slice(0, FINGERPRINT_CHARS)} abcde`)).toEqual([[2, owner("m")]]);
    expect(MIN_SECRET_LENGTH).toBe(6);
  });

  it("bounded memory: at most maxEnded fingerprints of ended secrets, the oldest dropped first; held ones are never dropped", () => {
    const prints = new SecretFingerprints(3);
    const secrets = Array.from({ length: 6 }, (_, i) => `secret-number-${i}`);
    for (const [i, s] of secrets.entries()) prints.hold(s, owner(`m${i}`));
    for (let i = 0; i < 5; i++) prints.release(secrets[i]!, owner(`m${i}`));
    expect(prints.endedCount).toBe(3);
    expect(prints.size).toBe(4);
    expect(found(prints, secrets.join(" ")).map(([, o]) => o.merchant)).toEqual(["m2", "m3", "m4", "m5"]);
    // Held again (a reset brings a secret back): it leaves the ended ones and is kept for as long as it is held.
    prints.hold(secrets[2]!, owner("m2"));
    expect(prints.endedCount).toBe(2);
  });

  it("never the secret: a removed merchant's secrets are nowhere in the registry, only their fingerprints, and still found", () => {
    const registry = new MerchantRegistry([]);
    const m = registry.add({
      id: "ended",
      apiKey: "key-of-ended",
      apiSecret: "ss_0123456789abcdef01234567",
      paymentToken: "mpt_test_0123456789abcdef01234567",
      login: { email: "e@x.test", password: "pw_0123456789abcdef01234567" },
    });
    registry.setApiSecret(m, "ss_rotated0123456789abcdef");
    registry.remove(m);
    const everything = inspect(registry, { depth: Number.POSITIVE_INFINITY, showHidden: true, maxArrayLength: null, maxStringLength: null });
    for (const secret of [
      "ss_0123456789abcdef01234567",
      "mpt_test_0123456789abcdef01234567",
      "pw_0123456789abcdef01234567",
      "ss_rotated0123456789abcdef",
    ]) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(3, 20));
    }
    const text = "a ss_0123456789abcdef01234567 b mpt_test_0123456789abcdef01234567 c pw_0123456789abcdef01234567 d ss_rotated0123456789abcdef";
    expect(found(registry.fingerprints, text).map(([at, o]) => [at, o.kind])).toEqual([
      [2, "api_secret"],
      [32, "payment_token"],
      [68, "password"],
      [98, "api_secret"],
    ]);
  });

  it("linear scan: lookups grow with the text, not with the secrets; 20,000 ended secrets that share their head and 55 lengths", () => {
    const prints = new SecretFingerprints(100_000);
    // Every generated payment token starts `mpt_test_`: the old prefix map looked at each of them at every `mpt_te`.
    const lengths = FINGERPRINT_CHARS - 10 + 1;
    for (let i = 0; i < 20_000; i++) {
      // Lengths 10 to 64, each with a hex digit after `mpt_test_`.
      const s = `mpt_test_${i.toString(16).padStart(24, "0")}${"z".repeat(40)}`.slice(0, 10 + (i % lengths));
      prints.hold(s, owner(`m${i}`));
      prints.release(s, owner(`m${i}`));
    }
    for (const n of [4_096, 65_536]) {
      const steps = { count: 0 };
      expect(found(prints, "mpt_test_".repeat(n / 8).slice(0, n), steps)).toEqual([]);
      // At most one lookup per length at each position that starts with a held head: 55 n, not 20,000 n.
      expect(steps.count).toBeLessThanOrEqual(lengths * n);
    }
  });
});

describe("retired keys verify for the scan", () => {
  it("bounded memory: the ring keeps the verification keys of the last MAX_RETIRED_VERIFIERS retired keys, oldest dropped first", async () => {
    const ring = new KeyRing();
    const kids: string[] = [];
    for (let i = 0; i < KeyRing.MAX_RETIRED_VERIFIERS + 10; i++) {
      const key = await ring.generate("HS256");
      kids.push(key.kid);
      ring.retire([key.kid], i % 2 === 0);
    }
    expect(ring.size).toBe(0);
    expect(ring.retiredCount).toBe(KeyRing.MAX_RETIRED_VERIFIERS);
    expect(ring.verifier(kids[0]!)).toBeUndefined();
    expect(ring.verifier(kids[9]!)).toBeUndefined();
    expect(ring.verifier(kids[10]!)?.kid).toBe(kids[10]);
    expect(ring.verifier(kids.at(-1)!)?.alg).toBe("HS256");
    // Never accepted again: only the scan asks `verifier`.
    expect(ring.find(kids.at(-1)!)).toBeUndefined();
  });
});
