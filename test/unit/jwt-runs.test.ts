import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isJwt } from "../../src/cli/calibrate/infer.js";
import { compactForm, hasJwt, jwsSpans, jwtShape, jwtSpans } from "../../src/core/jwt-runs.js";

/**
 * Issue 23 §2: the regular expressions that found JWTs in a URL (redaction) and in a log (scan)
 * started again at every `eyJ` of a run and read on to its end: `eyJ` repeated 5,260 times in a
 * path cost 0.6 s of the event loop, a 60 KB run sent to POST /__sandbox/scan 1.3 s. jwt-runs.ts
 * reads each run once; these tests count the characters it reads, and hold it to the former
 * expressions' answers.
 */

/** The former expressions, as redact.ts and scan.ts had them: the reference on short texts. */
const FORMER_JWT_RUN = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g;
const FORMER_JWS_SHAPE = /eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;

const spansOf = (re: RegExp, text: string) => [...text.matchAll(re)].map((m) => [m.index, m.index + m[0].length]);

/** `text` as a string whose every character read (charCodeAt, startsWith) is counted. */
function counted(text: string): { text: string; reads: () => number } {
  let reads = 0;
  const fake = {
    length: text.length,
    charCodeAt(i: number) {
      reads++;
      return text.charCodeAt(i);
    },
    startsWith(s: string, at: number) {
      reads += s.length;
      return text.startsWith(s, at);
    },
    includes: (s: string) => text.includes(s),
  };
  return { text: fake as unknown as string, reads: () => reads };
}

const KB60 = 60 * 1024;
const WORST: Array<[string, string]> = [
  ["eyJ repeated (issue 23 §2)", "eyJ".repeat(KB60 / 3)],
  ["eyJ. repeated", "eyJ.".repeat(KB60 / 4)],
  ["eyJ repeated, then a dot and no payload", `${"eyJ".repeat(KB60 / 3)}.`],
  ["eyJ repeated, then .eyJ and no third dot", `${"eyJ".repeat(KB60 / 6)}.${"eyJ".repeat(KB60 / 6)}`],
  ["short JWT-shaped runs", "eyJa.b/".repeat(KB60 / 7)],
  ["eyJ.eyJ. repeated", "eyJ.eyJ.".repeat(KB60 / 8)],
];

describe("linear scan: JWT-shaped runs are found reading each character a bounded number of times", () => {
  it.each(WORST)("jwtSpans and jwsSpans on 60 KB of %s", (_, text) => {
    for (const find of [jwtSpans, jwsSpans]) {
      const c = counted(text);
      find(c.text);
      // Each character is read at most twice (a run, then the run after a dot) plus `eyJ` checks.
      expect(c.reads()).toBeLessThanOrEqual(4 * text.length + 16);
    }
  });

  it("the same spans as the former expressions on the worst inputs, cut short enough for them", () => {
    for (const [, long] of WORST) {
      const text = long.slice(0, 600);
      expect(jwtSpans(text)).toEqual(spansOf(FORMER_JWT_RUN, text));
      expect(jwsSpans(text)).toEqual(spansOf(FORMER_JWS_SHAPE, text));
    }
  });

  it("the same spans as the former expressions on random texts of JWT pieces", () => {
    const piece = fc.constantFrom("eyJ", "eyJh", ".", "a", "Z", "_", "-", "/", " ", "e", "y", "J", "%2E", "eyJ.");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join("");
        expect(jwtSpans(text)).toEqual(spansOf(FORMER_JWT_RUN, text));
        expect(jwsSpans(text)).toEqual(spansOf(FORMER_JWS_SHAPE, text));
        expect(hasJwt(text)).toBe(spansOf(FORMER_JWT_RUN, text).length > 0);
      }),
      { numRuns: 2000 },
    );
  });

  it("a redaction's own head is not a JWT; a real one is, after Bearer, before ; or ,", () => {
    expect(jwtSpans("eyJh...(120 chars, sha256:0123abcd)")).toEqual([]);
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
    expect(jwtSpans(`Bearer ${jwt};v=1,${jwt}`)).toEqual([
      [7, 7 + jwt.length],
      [8 + jwt.length + 4, 8 + 2 * jwt.length + 4],
    ]);
  });
});

describe("one JWT-shape test: jwtShape decides for every caller what a whole value is", () => {
  const HS256_EMPTY_CLAIMS = "eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo";
  it.each<[string, string, "jws" | "jwe" | undefined]>([
    ["a signed JWT whose claims are {} (payload e30)", HS256_EMPTY_CLAIMS, "jws"],
    ["alg none: an empty signature", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "jws"],
    ["a compact JWE (five parts, the key part empty for dir)", "eyJhbGciOiJkaXIifQ..aXY.Y3Q.dGFn", "jwe"],
    ["four parts", "eyJhbGciOiJub25lIn0.e30.a.b", undefined],
    ["two parts", "eyJhbGciOiJub25lIn0.e30", undefined],
    ["an opaque token with dots, no JSON header", "pay.tok.123", undefined],
    ["a non-base64url character", "eyJhbGciOiJub25lIn0.e3+0.", undefined],
    ["a space", "eyJhbGciOiJub25lIn0.e30. ", undefined],
  ])("%s", (_what, text, shape) => {
    expect(jwtShape(text)).toBe(shape);
  });

  it("compactForm reads the parts without the header: the verifier says what else is wrong", () => {
    expect(compactForm("bm90IGpzb24.e30.sig")).toBe("jws");
    expect(compactForm("a.b.c.d.e")).toBe("jwe");
    expect(compactForm("a.b")).toBeUndefined();
    expect(compactForm("a.b+.c")).toBeUndefined();
  });

  it("calibrate's isJwt is the same test, with a header that names its algorithm (a JWT with {} claims was not one to it)", () => {
    expect(isJwt(HS256_EMPTY_CLAIMS)).toBe(true);
    expect(isJwt("eyJhbGciOiJkaXIifQ..aXY.Y3Q.dGFn")).toBe(false);
    expect(isJwt("eyJ0eXAiOiJKV1QifQ.e30.sig")).toBe(false); // {"typ":"JWT"}: no alg
    expect(isJwt("pay.tok.123")).toBe(false);
  });

  it("linear scan: a 60 KB value is read once", () => {
    const c = counted(`eyJ${"a".repeat(KB60)}.e30.`);
    expect(jwtShape(c.text)).toBe("jws");
    expect(c.reads()).toBeLessThanOrEqual(KB60 + 16);
  });
});
