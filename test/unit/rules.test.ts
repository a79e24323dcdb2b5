import { describe, expect, it } from "vitest";
import { CompiledRule, type RequestFacts } from "../../src/scenarios/rules.js";
import type { RuleFile } from "../../src/scenarios/schema.js";

/**
 * Unit tests of rule matching (src/scenarios/rules.ts): every condition of `match`, the call
 * count (which counts only requests that met the other conditions), and the path glob (its own
 * language is tested in glob.test.ts).
 */

const THEN: RuleFile["then"] = { set_state: "x" };

function rule(match?: RuleFile["match"], name?: string, index = 0): CompiledRule {
  return new CompiledRule({ ...(name !== undefined && { name }), ...(match && { match }), then: THEN }, index);
}

function facts(over: Partial<RequestFacts> = {}): RequestFacts {
  return { endpoint: "payment", method: "GET", path: "/api/v2/payment/p1", merchantId: "m_1", state: "started", elapsedMs: 0, ...over };
}

/** Runs a rule over a list of requests; true where it fired. */
function run(r: CompiledRule, list: Array<Partial<RequestFacts>>): boolean[] {
  return list.map((f) => r.matches(facts(f)));
}

describe("CompiledRule: name", () => {
  it("is the rule's name, or rules[<index>]", () => {
    expect(rule(undefined, "outage").name).toBe("outage");
    expect(rule(undefined, undefined, 3).name).toBe("rules[3]");
    expect(rule(undefined, undefined, 0).name).toBe("rules[0]");
  });
});

describe("CompiledRule: no match", () => {
  it("fires for every request, including unknown and control endpoints", () => {
    const r = rule();
    expect(run(r, [{}, { endpoint: "token", method: "POST" }, { endpoint: "unknown" }, { endpoint: "control" }, { merchantId: undefined }])).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(r.callCount).toBe(5);
  });
});

describe("CompiledRule: endpoint", () => {
  it("one endpoint", () => {
    const r = rule({ endpoint: "token" });
    expect(run(r, [{ endpoint: "token" }, { endpoint: "payment" }, { endpoint: "payment-init" }, { endpoint: "unknown" }])).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });

  it("each endpoint name matches only itself", () => {
    const names = ["token", "login", "payment", "cashout", "payment-init", "jwks"] as const;
    for (const name of names) {
      const r = rule({ endpoint: name });
      expect(names.map((n) => r.matches(facts({ endpoint: n })))).toEqual(names.map((n) => n === name));
    }
  });

  it("a list", () => {
    const r = rule({ endpoint: ["payment", "cashout"] });
    expect(run(r, [{ endpoint: "payment" }, { endpoint: "cashout" }, { endpoint: "token" }, { endpoint: "jwks" }])).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it("any, alone or in a list, matches every endpoint", () => {
    for (const endpoint of ["any", ["token", "any"]] as const) {
      const r = rule({ endpoint: endpoint as never });
      expect(run(r, [{ endpoint: "token" }, { endpoint: "login" }, { endpoint: "jwks" }, { endpoint: "unknown" }])).toEqual([true, true, true, true]);
    }
  });
});

describe("CompiledRule: method", () => {
  it("one method, compared exactly", () => {
    const r = rule({ method: "POST" });
    expect(run(r, [{ method: "POST" }, { method: "GET" }, { method: "post" }])).toEqual([true, false, false]);
  });

  it("a list", () => {
    const r = rule({ method: ["GET", "DELETE"] });
    expect(run(r, [{ method: "GET" }, { method: "DELETE" }, { method: "POST" }, { method: "HEAD" }])).toEqual([true, true, false, false]);
  });
});

describe("CompiledRule: path", () => {
  it("a glob", () => {
    const r = rule({ path: "/api/v2/payment/*" });
    expect(run(r, [{ path: "/api/v2/payment/p1" }, { path: "/api/v2/payment/p1/x" }, { path: "/api/v2/cashout/p1" }])).toEqual([true, false, false]);
  });

  it("regression: a pathological path under a backtracking-prone glob is decided (issue 10 §1 froze the server)", () => {
    // The former regular expression took 24 s on 217 dashes; on 8 KB it would never come back.
    const r = rule({ path: "/api/v2/payment/*-*-*-*-*" });
    const dashes = "-".repeat(8 * 1024);
    expect(run(r, [{ path: `/api/v2/payment/${dashes}/x` }, { path: `/api/v2/payment/${dashes}` }])).toEqual([false, true]);
  });
});

describe("CompiledRule: merchant", () => {
  it("only that merchant; never a request without one", () => {
    const r = rule({ merchant: "m_2" });
    expect(run(r, [{ merchantId: "m_2" }, { merchantId: "m_1" }, { merchantId: undefined }, { merchantId: "M_2" }])).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });
});

describe("CompiledRule: state", () => {
  it("only in that state", () => {
    const r = rule({ state: "armed" });
    expect(run(r, [{ state: "started" }, { state: "armed" }, { state: "Armed" }])).toEqual([false, true, false]);
  });
});

describe("CompiledRule: clock", () => {
  it("after is inclusive, before exclusive", () => {
    const r = rule({ clock: { after: "10m", before: "20m" } });
    const ms = [0, 599_999, 600_000, 1_199_999, 1_200_000, -1];
    expect(
      run(
        r,
        ms.map((elapsedMs) => ({ elapsedMs })),
      ),
    ).toEqual([false, false, true, true, false, false]);
  });

  it("durations as text or as a number of seconds", () => {
    expect(run(rule({ clock: { after: 90 } }), [{ elapsedMs: 89_999 }, { elapsedMs: 90_000 }])).toEqual([false, true]);
    expect(run(rule({ clock: { before: "1h30m" } }), [{ elapsedMs: 5_399_999 }, { elapsedMs: 5_400_000 }])).toEqual([true, false]);
    expect(run(rule({ clock: { after: "500ms" } }), [{ elapsedMs: 499 }, { elapsedMs: 500 }])).toEqual([false, true]);
  });
});

describe("CompiledRule: calls", () => {
  const five = [{}, {}, {}, {}, {}];
  it("nth", () => {
    expect(run(rule({ calls: { nth: 3 } }), five)).toEqual([false, false, true, false, false]);
  });
  it("from", () => {
    expect(run(rule({ calls: { from: 3 } }), five)).toEqual([false, false, true, true, true]);
  });
  it("times", () => {
    expect(run(rule({ calls: { times: 2 } }), five)).toEqual([true, true, false, false, false]);
  });
  it("from with times", () => {
    expect(run(rule({ calls: { from: 2, times: 2 } }), five)).toEqual([false, true, true, false, false]);
  });

  it("counts only requests that met every other condition", () => {
    const r = rule({ endpoint: "payment", method: "GET", merchant: "m_1", state: "started", clock: { after: "1s" }, calls: { nth: 2 } });
    const misses: Array<Partial<RequestFacts>> = [
      { endpoint: "token", elapsedMs: 1000 },
      { method: "POST", elapsedMs: 1000 },
      { merchantId: "m_2", elapsedMs: 1000 },
      { state: "armed", elapsedMs: 1000 },
      { elapsedMs: 999 },
    ];
    expect(run(r, misses)).toEqual([false, false, false, false, false]);
    expect(r.callCount).toBe(0);
    expect(run(r, [{ elapsedMs: 1000 }, ...misses, { elapsedMs: 1000 }, { elapsedMs: 1000 }])).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      false,
    ]);
    expect(r.callCount).toBe(3);
  });

  it("callCount counts matching calls even when calls does not let the rule fire; resetCount starts over", () => {
    const r = rule({ calls: { nth: 1 } });
    expect(run(r, [{}, {}, {}])).toEqual([true, false, false]);
    expect(r.callCount).toBe(3);
    r.resetCount();
    expect(r.callCount).toBe(0);
    expect(run(r, [{}, {}])).toEqual([true, false]);
  });

  it("each rule counts its own calls", () => {
    const a = rule({ calls: { nth: 2 } });
    const b = rule({ calls: { nth: 2 } });
    expect([a.matches(facts()), a.matches(facts()), b.matches(facts()), b.matches(facts())]).toEqual([false, true, false, true]);
  });
});
