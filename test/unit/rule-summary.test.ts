import { describe, expect, it } from "vitest";
import { ordinal, ruleName, ruleSummary } from "../../src/scenarios/rule-summary.js";
import { matchSchema, ruleSchema, type RuleFile, thenFields } from "../../src/scenarios/schema.js";

/**
 * Unit tests of the one line the QA page shows per rule (src/scenarios/rule-summary.ts): every
 * condition of `match` and every action of `then` in the scenario schema, their order, and the
 * values it must never show (a rotated secret, a scripted body).
 */

const THEN: RuleFile["then"] = { set_state: "x" };
const when = (match: RuleFile["match"]) => ruleSummary({ match, then: THEN });
const does = (then: RuleFile["then"]) => ruleSummary({ match: { endpoint: "token" }, then });

/** One value of each condition and action the schema has: the tests below check they list them all. */
const EACH_MATCH: Required<NonNullable<RuleFile["match"]>> = {
  endpoint: ["payment", "cashout"],
  method: "POST",
  path: "/api/v2/payment/**",
  merchant: "m_1",
  calls: { nth: 4 },
  state: "expired",
  clock: { after: "59m" },
};
const EACH_THEN: Required<RuleFile["then"]> = {
  respond: { status: 503, retry_after: "30s", headers: { "X-Outage": "yes" }, body: { secret: "not-shown" } },
  delay: "2s",
  drop_connection: true,
  reject_credentials: true,
  disable_merchant: true,
  enable_merchant: true,
  rotate_secret: "the-new-secret-0123",
  revoke_token: "all",
  expire_token: "presented",
  issue_token: { expired: true },
  rotate_signing_key: { keep_old: true },
  expire_payment_token: true,
  revoke_payment_token: true,
  login_gone: true,
  advance_clock: "61m",
  set_state: "broken",
};

describe("ruleSummary", () => {
  it("reads as the page shows it: conditions · joined, an arrow, the actions", () => {
    expect(ruleSummary({ match: { endpoint: ["payment", "cashout"], calls: { nth: 4 } }, then: { expire_token: "presented" } })).toBe(
      "payment, cashout · 4th call → expire_token: presented",
    );
    expect(ruleSummary({ match: { endpoint: "token", calls: { times: 2 } }, then: { respond: { status: 503, retry_after: "30s" } } })).toBe(
      "token · first 2 calls → respond: 503 (retry_after 30s)",
    );
  });

  it("summarises every condition of match, in the schema's order, with all of them at once", () => {
    expect(Object.keys(EACH_MATCH).sort()).toEqual(Object.keys(matchSchema.shape).sort());
    expect(ruleSchema.safeParse({ match: EACH_MATCH, then: THEN }).success).toBe(true);
    expect(when(EACH_MATCH)).toBe(
      "payment, cashout · POST · /api/v2/payment/** · merchant m_1 · state expired · after 59m · 4th call → set_state: x",
    );
    const one = Object.entries(EACH_MATCH).map(([key, value]) => when({ [key]: value }));
    expect(one).toEqual([
      "payment, cashout → set_state: x",
      "POST → set_state: x",
      "/api/v2/payment/** → set_state: x",
      "merchant m_1 → set_state: x",
      "4th call → set_state: x",
      "state expired → set_state: x",
      "after 59m → set_state: x",
    ]);
  });

  it("summarises every action of then, in the schema's order, never a rotated secret or a scripted body", () => {
    expect(Object.keys(EACH_THEN).sort()).toEqual(Object.keys(thenFields).sort());
    expect(ruleSchema.safeParse({ then: EACH_THEN }).success).toBe(true);
    const all = ruleSummary({ then: EACH_THEN });
    expect(all).toBe(
      "every request → respond: 503 (retry_after 30s, headers X-Outage), delay: 2s, drop_connection, reject_credentials, disable_merchant, enable_merchant, rotate_secret, revoke_token: all, expire_token: presented, issue_token: expired, rotate_signing_key: keep_old, expire_payment_token, revoke_payment_token, login_gone, advance_clock: 61m, set_state: broken",
    );
    expect(all).not.toContain("the-new-secret-0123");
    expect(all).not.toContain("not-shown");
    // Written in the file's order or not, the actions come in the schema's.
    expect(does({ set_state: "s", delay: 1 })).toBe("token → delay: 1s, set_state: s");
  });

  it("says every request for a rule without conditions, and any endpoint for `any`", () => {
    expect(ruleSummary({ then: { delay: "3s" } })).toBe("every request → delay: 3s");
    expect(when({})).toBe("every request → set_state: x");
    expect(when({ endpoint: "any" })).toBe("any endpoint → set_state: x");
    expect(when({ endpoint: ["token", "any"] })).toBe("any endpoint → set_state: x");
    expect(when({ method: ["GET", "HEAD"] })).toBe("GET, HEAD → set_state: x");
  });

  it("words each kind of calls", () => {
    expect(when({ calls: { nth: 1 } })).toBe("1st call → set_state: x");
    expect(when({ calls: { from: 2 } })).toBe("from the 2nd call → set_state: x");
    expect(when({ calls: { times: 1 } })).toBe("1st call → set_state: x");
    expect(when({ calls: { times: 3 } })).toBe("first 3 calls → set_state: x");
    expect(when({ calls: { from: 2, times: 2 } })).toBe("calls 2–3 → set_state: x");
    expect(when({ calls: { from: 5, times: 1 } })).toBe("5th call → set_state: x");
    expect(when({ calls: {} })).toBe("every request → set_state: x");
  });

  it("words the clock window and durations given as seconds", () => {
    expect(when({ clock: { before: "2h" } })).toBe("before 2h → set_state: x");
    expect(when({ clock: { after: 90, before: "2h" } })).toBe("after 90s · before 2h → set_state: x");
    expect(when({ clock: {} })).toBe("every request → set_state: x");
    expect(does({ advance_clock: -300 })).toBe("token → advance_clock: -300s");
    expect(does({ advance_clock: "-2h" })).toBe("token → advance_clock: -2h");
  });

  it("words each form of respond, issue_token and rotate_signing_key", () => {
    expect(does({ respond: { status: 500 } })).toBe("token → respond: 500");
    expect(does({ respond: { status: 200, headers: { "X-A": "1", "X-B": "2" } } })).toBe("token → respond: 200 (headers X-A, X-B)");
    expect(does({ respond: { status: 429, retry_after: 10 } })).toBe("token → respond: 429 (retry_after 10s)");
    expect(does({ issue_token: {} })).toBe("token → issue_token");
    expect(does({ issue_token: { not_before: "5m" } })).toBe("token → issue_token: not_before 5m");
    expect(does({ issue_token: { expired: true, not_before: "5m" } })).toBe("token → issue_token: expired + not_before 5m");
    expect(does({ rotate_signing_key: true })).toBe("token → rotate_signing_key");
    expect(does({ rotate_signing_key: { keep_old: false } })).toBe("token → rotate_signing_key");
  });
});

describe("ruleName", () => {
  it("is the rule's name, or rules[<index>] as X-Sandbox-Rule says it", () => {
    expect(ruleName({ name: "outage", then: THEN }, 2)).toBe("outage");
    expect(ruleName({ then: THEN }, 2)).toBe("rules[2]");
  });
});

describe("ordinal", () => {
  it("gives English ordinals, the teens included", () => {
    expect([1, 2, 3, 4, 10, 11, 12, 13, 14, 21, 22, 23, 101, 111, 112].map(ordinal)).toEqual([
      "1st",
      "2nd",
      "3rd",
      "4th",
      "10th",
      "11th",
      "12th",
      "13th",
      "14th",
      "21st",
      "22nd",
      "23rd",
      "101st",
      "111th",
      "112th",
    ]);
  });
});
