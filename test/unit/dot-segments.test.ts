import { describe, expect, it } from "vitest";
import { hasDotSegment, withoutDotSegments } from "../../src/core/dot-segments.js";

describe("dot segments (RFC 3986 §5.2.4)", () => {
  it("finds a '.' or '..' segment, literal or %2e in either case, and nothing else", () => {
    for (const p of ["/.", "/..", "/a/./b", "/a/../b", "/a/%2e%2e/b", "/a/%2E/b", "/a/.%2E", "/a/%2e."])
      expect([p, hasDotSegment(p)]).toEqual([p, true]);
    for (const p of ["/", "/a/.../b", "/a..b", "/.well-known/jwks.json", "/a/%2e%2e%2e", "/a/%2f..x", "/a.", "/a/b."])
      expect([p, hasDotSegment(p)]).toEqual([p, false]);
  });

  it("resolves them as RFC 3986 §5.2.4 does (its examples and the sandbox's paths)", () => {
    expect(withoutDotSegments("/a/b/c/./../../g")).toBe("/a/g");
    expect(withoutDotSegments("/mid/content=5/../6")).toBe("/mid/6");
    expect(withoutDotSegments("/api/v2/payment/%2e%2e/cashout/x")).toBe("/api/v2/cashout/x");
    expect(withoutDotSegments("/../../x")).toBe("/x");
    expect(withoutDotSegments("/a/b/..")).toBe("/a/");
    expect(withoutDotSegments("/a/b/.")).toBe("/a/b/");
  });

  it("linear scan: a 64 KiB path of near-miss segments is one pass (counted in characters, not timed)", () => {
    // '/...' never matches but makes every position try the pattern: work is bounded per position.
    const path = "/...".repeat(16_384);
    expect(hasDotSegment(path)).toBe(false);
    expect(hasDotSegment(`${path}/..`)).toBe(true);
    expect(withoutDotSegments(`${path}/..`).length).toBe(path.length - 4 + 1);
  });
});
