import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileGlob, GLOB_LIMITS, globProblem } from "../../src/scenarios/glob.js";

/**
 * Unit tests of path globs (src/scenarios/glob.ts): what `*`, `**` and `/**` match, that the
 * language is exactly the one of the regular expression the sandbox used before (checked against
 * it on every small pattern and path, where backtracking still finishes), the load-time limits,
 * and that the worst patterns decide 8 KB paths (no time is asserted: a backtracking matcher
 * would not come back at all).
 */

/** The sandbox's former matcher, kept here as the reference language. Only ever run on short inputs. */
function referenceRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "/" && glob[i + 1] === "*" && glob[i + 2] === "*") {
      re += "(?:/.*)?";
      i += 2;
    } else if (ch === "*" && glob[i + 1] === "*") {
      re += ".*";
      i++;
    } else if (ch === "*") re += "[^/]*";
    else re += ch.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Every string of `alphabet` up to `max` characters long, the empty one included. */
function allStrings(alphabet: string[], max: number): string[] {
  const out = [""];
  let layer = [""];
  for (let n = 1; n <= max; n++) {
    layer = layer.flatMap((s) => alphabet.map((c) => s + c));
    out.push(...layer);
  }
  return out;
}

describe("compileGlob", () => {
  const cases: Array<[string, string[], string[]]> = [
    [
      "/api/v2/payment/*",
      ["/api/v2/payment/p1", "/api/v2/payment/init", "/api/v2/payment/a.b-c_d", "/api/v2/payment/"],
      ["/api/v2/payment/p1/x", "/api/v2/payment", "/api/v2/cashout/p1", "x/api/v2/payment/p1"],
    ],
    // "/**" is zero or more segments: the group's own path matches too.
    ["/api/v2/**", ["/api/v2", "/api/v2/", "/api/v2/a", "/api/v2/a/b/c/d", "/api/v2/auth/token"], ["/api/v2x", "/api/v3/a", "/x/api/v2/a"]],
    ["/api/*/token", ["/api/v2/token", "/api/v9/token", "/api//token"], ["/api/v2/auth/token", "/api/token"]],
    [
      "/api/**/refund",
      ["/api/refund", "/api/v2/refund", "/api/v2/payment/p1/refund"],
      ["/api/v2/payment/p1/refunds", "/api/v2/payment/p1/refund/x", "/apirefund"],
    ],
    ["/api/v2/payment/ord-*", ["/api/v2/payment/ord-1", "/api/v2/payment/ord-"], ["/api/v2/payment/order-1", "/api/v2/payment/ord-1/x"]],
    ["/api/v2/payment/*-*-*-*-*", ["/api/v2/payment/6f1c-4b-a-9-e", "/api/v2/payment/----"], ["/api/v2/payment/---", "/api/v2/payment/a-b-c-d-e/f"]],
    // "**" not after a slash is any run of characters, slashes included.
    ["/api**", ["/api", "/apis", "/api/v2/x"], ["/ap", "/v2/api"]],
    [
      "/.well-known/jwks.json",
      ["/.well-known/jwks.json"],
      ["/.well-known/jwksXjson", "/.well-known/jwks.json/", "/.well-known/JWKS.json", "/x/.well-known/jwks.json"],
    ],
    ["/", ["/"], ["", "/a", "//"]],
  ];
  for (const [glob, yes, no] of cases) {
    it(`${glob}`, () => {
      const g = compileGlob(glob);
      for (const path of yes) expect({ path, matches: g.test(path) }).toEqual({ path, matches: true });
      for (const path of no) expect({ path, matches: g.test(path) }).toEqual({ path, matches: false });
    });
  }

  it("every regular-expression character but * is literal", () => {
    const literal = "/a.b+c?d^e$f{1}(g)|h[i]\\j";
    const g = compileGlob(literal);
    expect(g.test(literal)).toBe(true);
    for (const path of [
      "/aXb+c?d^e$f{1}(g)|h[i]\\j",
      "/a.bbc?d^e$f{1}(g)|h[i]\\j",
      "/a.b+cd^e$f{1}(g)|h[i]\\j",
      "/a.b+c?d^e$f{1}(g)|h[i]\\",
      "/a.b+c?d^e$f{1}(g)|h[i]\\jx",
    ]) {
      expect({ path, matches: g.test(path) }).toEqual({ path, matches: false });
    }
  });

  it("* never crosses a slash, ** does", () => {
    expect(compileGlob("/*").test("/a/b")).toBe(false);
    expect(compileGlob("/**").test("/a/b")).toBe(true);
    expect(compileGlob("/*/*").test("/a/b")).toBe(true);
    expect(compileGlob("/*/*").test("/a/b/c")).toBe(false);
  });

  it("** does not cross a line terminator (as . did), * does", () => {
    for (const lt of ["\n", "\r", "\u2028", "\u2029"]) {
      expect(compileGlob("/**").test(`/a${lt}b`)).toBe(false);
      expect(compileGlob("/a**").test(`/a${lt}`)).toBe(false);
      expect(compileGlob("/*").test(`/a${lt}b`)).toBe(true);
    }
  });

  it("one compiled glob answers many paths in any order (what it remembers between paths never changes an answer)", () => {
    const g = compileGlob("/api/*/p-*/**");
    const paths = ["/api/v2/p-1", "/api/v2/p-1/x/y", "/api/v2/q-1", "/api/v2/p-", "/api//p-/", "/api/v2/x/p-1", "/api/v2/p-1"];
    const once = paths.map((p) => compileGlob("/api/*/p-*/**").test(p));
    expect([...paths, ...[...paths].reverse()].map((p) => g.test(p))).toEqual([...once, ...[...once].reverse()]);
    expect(once).toEqual([true, true, false, true, true, false, true]);
  });

  it("counts wildcards: *, ** and /** one each", () => {
    expect([compileGlob("/api").wildcards, compileGlob("/*-*").wildcards, compileGlob("/**/x**").wildcards, compileGlob("/***").wildcards]).toEqual([
      0, 2, 2, 2,
    ]);
  });
});

describe("compileGlob against the former regular expression", () => {
  // maxCachedStates 0 and 1: the sets the DFA forgets (past its bound) are computed the same way.
  // (The forgetting matcher is slower, so it gets one character less of each.)
  for (const [maxCachedStates, globMax, pathMax] of [
    [undefined, 6, 7],
    [0, 5, 6],
    [1, 5, 6],
  ] as const) {
    it(`agrees on every pattern of up to ${globMax} characters of / * a and every path of up to ${pathMax} of / a b (DFA states kept: ${maxCachedStates ?? "default"})`, () => {
      const paths = allStrings(["/", "a", "b"], pathMax);
      for (const glob of allStrings(["/", "*", "a"], globMax)) {
        const g = compileGlob(glob, { maxCachedStates });
        const re = referenceRegExp(glob);
        const differ = paths.filter((p) => g.test(p) !== re.test(p));
        expect({ glob, differ }).toEqual({ glob, differ: [] });
      }
    });
  }

  it("agrees on random short patterns and paths with literals, dots and line terminators", () => {
    const globChar = fc.constantFrom("/", "*", "a", "-", ".", "\n");
    const pathChar = fc.constantFrom("/", "a", "b", "-", ".", "\n", "\u2028");
    fc.assert(
      fc.property(fc.string({ unit: globChar, maxLength: 10 }), fc.string({ unit: pathChar, maxLength: 14 }), (glob, path) => {
        const expected = referenceRegExp(glob).test(path);
        expect({ glob, path, matches: compileGlob(glob).test(path) }).toEqual({ glob, path, matches: expected });
        expect({ glob, path, uncached: compileGlob(glob, { maxCachedStates: 0 }).test(path) }).toEqual({ glob, path, uncached: expected });
      }),
      { seed: 20260101, numRuns: 5000 },
    );
  });
});

describe("regression: a path glob froze the server (issue 10 §1)", () => {
  // Each of these took the former matcher from seconds (a few hundred characters) to forever (8 KB).
  const KB8 = 8 * 1024;
  const worst: Array<[string, string, boolean]> = [
    ["/api/v2/payment/*-*-*-*-*", `/api/v2/payment/${"-".repeat(KB8)}/x`, false],
    ["/api/v2/payment/*-*-*-*-*", `/api/v2/payment/${"-".repeat(KB8)}`, true],
    ["/*a*a*a*a*a*a*a*a*b", `/${"a".repeat(KB8)}`, false],
    ["/*a*a*a*a*a*a*a*a*b", `/${"a".repeat(KB8)}b`, true],
    ["/**/*-*-*/**", `/${"-".repeat(KB8)}`, true],
    ["/**/*-*-*/**x", `/${"-/".repeat(KB8 / 2)}`, false],
    ["/**a**a**a**a**b", `/${"a".repeat(KB8)}`, false],
    ["/**/**/**/**/**/**/**/**/b", `/${"a/".repeat(KB8 / 2)}`, false],
  ];
  for (const [glob, path, expected] of worst) {
    it(`${glob} decides an 8 KB path: ${expected ? "match" : "no match"}`, () => {
      expect(compileGlob(glob).test(path)).toBe(expected);
    });
  }
});

describe("globProblem", () => {
  it("accepts patterns up to the limits", () => {
    expect(globProblem("/api/v2/payment/*-*-*-*-*")).toBeUndefined();
    expect(globProblem(`/${"a".repeat(GLOB_LIMITS.maxLength - 1)}`)).toBeUndefined();
    expect(globProblem(`/${"*-".repeat(GLOB_LIMITS.maxWildcards)}`)).toBeUndefined();
  });

  it("refuses a pattern longer than the limit, saying how long it is", () => {
    expect(globProblem(`/${"a".repeat(GLOB_LIMITS.maxLength)}`)).toBe(
      "is 257 characters long; a path pattern may have at most 256: match a shorter prefix with /** instead",
    );
  });

  it("refuses more wildcards than the limit, counting each * and ** once", () => {
    expect(globProblem(`/${"*-".repeat(GLOB_LIMITS.maxWildcards + 1)}`)).toBe(
      "has 17 wildcards; a path pattern may have at most 16 (* and ** count one each): use one * for a whole segment, as in /api/v2/payment/*",
    );
    expect(globProblem("/**".repeat(17))).toMatch(/^has 17 wildcards;/);
  });
});
