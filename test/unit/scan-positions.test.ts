import { describe, expect, it } from "vitest";
import { scanText } from "../../src/control/scan.js";
import { MerchantRegistry } from "../../src/core/merchants.js";

/**
 * The scan's placing of hits on lines and columns, counted rather than timed: how many characters
 * it reads for a line full of secrets. A String object stands in for the text so the reads of its
 * characters can be counted; everything else about it behaves as the string.
 */

const SECRET = "a-secret-of-the-merchant";

function countingText(text: string): { text: string; reads: () => number } {
  let reads = 0;
  // A String object, not a string: only an object can have its charCodeAt replaced.
  // biome-ignore lint/complexity/noBannedTypes: the boxed String is the point (see above)
  const boxed = new String(text) as String & { charCodeAt(i: number): number };
  boxed.charCodeAt = (i: number) => {
    reads++;
    return text.charCodeAt(i);
  };
  return { text: boxed as unknown as string, reads: () => reads };
}

describe("scanText positions", () => {
  it("regression: columns on one long line were counted from the line's start for each hit (quadratic); each character is read a bounded number of times", async () => {
    const merchants = new MerchantRegistry([{ id: "m1", apiKey: "k1", apiSecret: SECRET, paymentToken: "payment-token-of-m1" }]).all();
    const plain = `${SECRET} `.repeat(2000);
    const { text, reads } = countingText(plain);
    const hits = await scanText(text, merchants, () => undefined);
    expect(hits).toHaveLength(2000);
    expect(hits.at(-1)).toEqual({ line: 1, column: 1999 * (SECRET.length + 1) + 1, kind: "api_secret", merchant: "m1" });
    // A few passes (the JWT-run walk reads a character at most four times, core/jwt-runs.ts), not
    // 2,000 walks from the start of the line (about 50 million reads).
    expect(reads()).toBeLessThanOrEqual(4 * plain.length);
  });
});
