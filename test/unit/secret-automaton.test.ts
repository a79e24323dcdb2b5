import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Span } from "../../src/core/jwt-runs.js";
import { redact, redactUrl } from "../../src/core/redact.js";
import { SecretAutomaton } from "../../src/core/secret-automaton.js";
import { SecretIndex } from "../../src/core/secret-index.js";

/**
 * Issue 23 §6: the redaction looked every secret length up at every position of a URL, so a
 * session that rotated its secret to 400 lengths made anyone's 16 KB path cost 5–11 s. One
 * Aho–Corasick automaton over all secrets reads each character once whatever the secrets.
 */

/** Every [start, end) where one of `secrets` stands, merged: the reference. */
function naiveSpans(text: string, secrets: readonly string[]): Span[] {
  const spans: Span[] = [];
  for (const s of secrets) for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + 1)) spans.push([at, at + s.length]);
  spans.sort((a, b) => a[0] - b[0]);
  const out: Span[] = [];
  for (const [start, end] of spans) {
    const last = out[out.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

const find = (automaton: SecretAutomaton, text: string, visible: (s: string) => boolean = () => true): Span[] => {
  const spans: Span[] = [];
  automaton.findIn(text, 0, text.length, visible, spans);
  return spans;
};

/** Secrets nested in each other (`aa…ab`, one character longer each): the most matches per position. */
const NESTED = Array.from({ length: 1000 }, (_, i) => `${"a".repeat(15 + i)}b`);

describe("linear scan: the secret automaton", () => {
  it("finds what a search for each secret finds, on random secrets and texts", () => {
    const text = fc.stringMatching(/^[ab\-/%.]{0,60}$/);
    const secret = fc.stringMatching(/^[ab\-/%.]{1,6}$/);
    fc.assert(
      fc.property(fc.array(secret, { minLength: 1, maxLength: 12 }), text, (secrets, t) => {
        expect(find(new SecretAutomaton(secrets), t)).toEqual(naiveSpans(t, secrets));
      }),
      { numRuns: 3000 },
    );
  });

  it("reads each character once and asks about a bounded number of secrets per character, with 1,000 nested secrets", () => {
    const automaton = new SecretAutomaton(NESTED);
    const text = "a".repeat(16 * 1024) + "b";
    let asked = 0;
    const spans = find(automaton, text, () => {
      asked++;
      return true;
    });
    expect(spans).toEqual([[text.length - 1015, text.length]]);
    // One question at the one place a secret ends; none elsewhere.
    expect(asked).toBe(1);
    // Hidden secrets (an ended session's) are skipped a few at a time at most, then counted as visible.
    asked = 0;
    const all = find(automaton, `${text}${text}`, () => {
      asked++;
      return false;
    });
    expect(asked).toBeLessThanOrEqual(2 * 5);
    expect(all).toHaveLength(2);
  });

  it("a hidden secret is skipped for the longest visible one ending at the same place", () => {
    const automaton = new SecretAutomaton(["0123456789abcdef", "456789abcdef", "89abcdef"]);
    expect(find(automaton, "x0123456789abcdefx", (s) => s !== "0123456789abcdef")).toEqual([[5, 17]]);
    expect(find(automaton, "x0123456789abcdefx", (s) => s === "89abcdef")).toEqual([[9, 17]]);
    expect(find(automaton, "x0123456789abcdefx", () => false)).toEqual([]);
  });
});

describe("linear scan: the redaction's cost does not depend on how many secret lengths there are", () => {
  it("a 16 KB path with 1,000 secrets of 1,000 lengths that all start like it (the former lookup: 156 s for these two)", () => {
    const index = new SecretIndex();
    for (const s of NESTED) index.add(s);
    const path = `/${"a".repeat(16 * 1024)}`;
    const started = performance.now();
    expect(redactUrl(path, "", index.view()).path).toBe(path);
    expect(redactUrl(`${path}b`, "", index.view()).path).toBe(`/${"a".repeat(16 * 1024 - 1014)}${redact(`${"a".repeat(1014)}b`)}`);
    // Generous: a few milliseconds here; the lookup per length took seconds at 400 lengths.
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("bounded: 15,000 secrets of 5,000 sessions added one session at a time are searched in at most log2 + 1 automata", () => {
    const index = new SecretIndex();
    for (let i = 0; i < 5000; i++) {
      for (const kind of ["ss", "mpt", "pw"]) index.add(`${kind}_${i}_0123456789abcdef`);
      index.view();
    }
    expect(index.levelCount).toBeLessThanOrEqual(Math.ceil(Math.log2(15000)) + 1);
    expect(redactUrl("/p/pw_4711_0123456789abcdef", "", index.view()).path).toBe(`/p/${redact("pw_4711_0123456789abcdef")}`);
  });
});
