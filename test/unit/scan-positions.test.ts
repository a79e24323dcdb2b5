import { describe, expect, it } from "vitest";
import { scanText } from "../../src/control/scan.js";
import { MerchantRegistry } from "../../src/core/merchants.js";

/**
 * The scan's placing of hits on lines and columns, counted rather than timed: how many characters
 * it reads for a line full of secrets. A String object stands in for the text so the reads of its
 * characters can be counted; everything else about it behaves as the string.
 */

const SECRET = "a-secret-of-the-merchant";

function countingText(text: string): { text: string; reads: () => number; searches: () => number } {
  let reads = 0;
  let searches = 0;
  // A String object, not a string: only an object can have its methods replaced.
  // biome-ignore lint/complexity/noBannedTypes: the boxed String is the point (see above)
  const boxed = new String(text) as String & Record<"startsWith" | "indexOf" | "includes" | "slice" | "charCodeAt", (...a: never[]) => unknown>;
  boxed.charCodeAt = (i: number) => {
    reads++;
    return text.charCodeAt(i);
  };
  // Each search or copy of a piece of the text counts the characters it may read.
  boxed.startsWith = (s: string, at?: number) => {
    searches += s.length;
    return text.startsWith(s, at);
  };
  boxed.indexOf = (s: string, at?: number) => {
    searches += text.length - (at ?? 0);
    return text.indexOf(s, at);
  };
  boxed.includes = (s: string, at?: number) => {
    searches += text.length - (at ?? 0);
    return text.includes(s, at);
  };
  boxed.slice = (a?: number, b?: number) => {
    const piece = text.slice(a, b);
    searches += piece.length;
    return piece;
  };
  return { text: boxed as unknown as string, reads: () => reads, searches: () => searches };
}

describe("scanText positions", () => {
  it("regression: columns on one long line were counted from the line's start for each hit (quadratic); each character is read a few times at most", async () => {
    const merchants = new MerchantRegistry([{ id: "m1", apiKey: "k1", apiSecret: SECRET, paymentToken: "payment-token-of-m1" }]).fingerprints;
    const plain = `${SECRET} `.repeat(2000);
    const { text, reads } = countingText(plain);
    const { hits } = await scanText(text, merchants, { findKey: () => undefined, clientClaims: ["client_id"] });
    expect(hits).toHaveLength(2000);
    expect(hits.at(-1)).toEqual({ line: 1, column: 1999 * (SECRET.length + 1) + 1, kind: "api_secret", merchant: "m1" });
    // A few passes (the fingerprints' hashes, the JWT shapes, the positions up to the last hit), not
    // 2,000 walks from the start of the line (about 50 million reads).
    expect(reads()).toBeLessThanOrEqual(5 * plain.length);
  });

  it("linear scan: 60 KB of `mpt_test_` with 5,000 sessions' secrets costs a few reads per character, not one search per payment token at each (was 2.6 s)", async () => {
    const registry = new MerchantRegistry([]);
    const hex = (i: number) => i.toString(16).padStart(24, "0");
    for (let i = 0; i < 5000; i++) {
      registry.add({
        id: `m.ses_${i}`,
        apiKey: `sk_${i}`,
        apiSecret: `ss_${hex(i * 7919)}`,
        paymentToken: `mpt_test_${hex(i * 104_729)}`,
        login: { email: `${i}@sessions.sandbox.test`, password: `pw_${hex(i * 31)}` },
      });
    }
    const plain = "mpt_test_".repeat(6800);
    const { text, reads, searches } = countingText(plain);
    expect((await scanText(text, registry.fingerprints, { findKey: () => undefined, clientClaims: ["client_id"] })).hits).toEqual([]);
    // Every generated payment token starts `mpt_test_`: looking each up where a text starts so was
    // 5,000 searches at each of its 6,800 places (34 million).
    expect(reads() + searches()).toBeLessThanOrEqual(10 * plain.length);
  });
});
