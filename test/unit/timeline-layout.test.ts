import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../ui/src/types.js";
import { describeTimeline, type LayoutMark, layoutTimeline, PAD, type TimelineLayout } from "../../ui/src/panels/timeline-layout.js";

/**
 * The QA page's timeline picture, from journals shaped like the sandbox writes them: a token
 * exchange carries the issued jti and its exp (tokenExpiresAt), a protected call the jti it
 * presented (and tokenId when it was accepted), refusals their code and the rules that fired.
 */
const T0 = Date.parse("2026-11-25T09:00:00.000Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
const WIDTH = 1000;

function journal() {
  let seq = 0;
  const entries: JournalEntry[] = [];
  const base = (minutes: number, over: Partial<JournalEntry>): JournalEntry => {
    seq += 1;
    const e: JournalEntry = {
      id: `req_${seq}`,
      seq,
      time: at(minutes),
      sandboxTime: at(minutes),
      method: "POST",
      path: "/api/v2/payment",
      query: "",
      status: 200,
      durationMs: 3,
      endpoint: "payment",
      scenario: "token-expires-after-calls",
      session: "ses_1",
      merchant: "m_1.ses_1",
      ...over,
    };
    entries.push(e);
    return e;
  };
  return {
    entries,
    /** A token exchange that got `jti`, valid for `ttlMinutes`. */
    token: (minutes: number, jti: string, ttlMinutes = 60) =>
      base(minutes, { path: "/api/v2/token", endpoint: "token", tokenId: jti, tokenExpiresAt: at(minutes + ttlMinutes) }),
    /** A payment call presenting `jti`: accepted, or refused with `code`. */
    pay: (minutes: number, jti: string | undefined, refused?: { status?: number; code: string; rules?: string[] }) =>
      base(minutes, {
        ...(jti !== undefined && { presentedTokenId: jti }),
        ...(jti !== undefined && !refused && { tokenId: jti }),
        ...(refused && { status: refused.status ?? 401, code: refused.code }),
        ...(refused?.rules && { rules: refused.rules }),
      }),
    other: (minutes: number, over: Partial<JournalEntry>) => base(minutes, over),
  };
}

const layout = (entries: JournalEntry[], now: number, marks: LayoutMark[] = []) => layoutTimeline({ entries, marks, now: at(now), width: WIDTH });
const bar = (l: TimelineLayout, jti: string) => l.tokens.find((t) => t.jti === jti)!;
const mark = (l: TimelineLayout, id: string) => l.requests.find((r) => r.id === id)!;
const xAt = (l: TimelineLayout, minutes: number) =>
  PAD + ((T0 + minutes * 60_000 - l.range.start) / (l.range.end - l.range.start)) * (WIDTH - 2 * PAD);

/** No two bars in one lane overlap (with their drawn extent). */
function expectNoCollisions(l: TimelineLayout) {
  for (const a of l.tokens)
    for (const b of l.tokens) {
      if (a === b || a.lane !== b.lane) continue;
      expect(a.x2 < b.x1 || b.x2 < a.x1, `${a.jti} and ${b.jti} share lane ${a.lane}`).toBe(true);
    }
}

describe("timeline layout", () => {
  it("a client that reuses its token after expiry: its marks lie past the bar's end, refused", () => {
    const j = journal();
    j.token(0, "tok_a");
    for (const m of [1, 2, 3]) j.pay(m, "tok_a");
    const late1 = j.pay(64, "tok_a", { code: "token_expired" });
    const late2 = j.pay(65, "tok_a", { code: "token_expired" });
    const l = layout(j.entries, 66, [{ kind: "clock", at: at(63), label: "+61m" }]);

    expect(l.tokens).toHaveLength(1);
    const a = bar(l, "tok_a");
    expect(a).toMatchObject({ issuedAt: at(0), issuedBy: "req_1", expiresAt: at(60), openEnd: false, lane: 0 });
    expect(a.endedEarlyAt).toBeUndefined();
    expect(a.x1).toBeCloseTo(xAt(l, 0), 6);
    expect(a.x2).toBeCloseTo(xAt(l, 60), 6);
    for (const late of [late1, late2]) {
      const r = mark(l, late.id);
      expect(r).toMatchObject({ outcome: "refused", code: "token_expired", lane: 0, token: "tok_a", afterEnd: true });
      expect(r.x).toBeGreaterThan(a.x2);
    }
    expect(l.requests.filter((r) => !r.afterEnd).map((r) => r.outcome)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(describeTimeline(l)).toBe("Timeline: 1 token, 6 requests, 2 refused");
  });

  it("a client that fetches a new token for every call: many short bars, one call on each", () => {
    const j = journal();
    for (let i = 0; i < 5; i++) {
      j.token(i * 10, `tok_${i}`, 5);
      j.pay(i * 10 + 0.5, `tok_${i}`);
    }
    const l = layout(j.entries, 50);

    expect(l.tokens).toHaveLength(5);
    for (const b of l.tokens) {
      const onIt = l.requests.filter((r) => r.token === b.jti && r.path === "/api/v2/payment");
      expect(onIt).toHaveLength(1);
      expect(onIt[0]!.lane).toBe(b.lane);
      expect(onIt[0]!.x).toBeGreaterThanOrEqual(b.x1);
      expect(onIt[0]!.x).toBeLessThanOrEqual(b.x2);
      expect(b.x2 - b.x1).toBeCloseTo(xAt(l, 5) - xAt(l, 0), 6);
    }
    // They never overlap, so they share one lane.
    expect(l.lanes).toBe(1);
    expect(l.noTokenLane).toBeNull();
  });

  it("tokens that are valid at once take separate lanes, and no lane holds two overlapping bars", () => {
    const j = journal();
    for (let i = 0; i < 4; i++) {
      j.token(i, `tok_${i}`);
      j.pay(i + 0.5, `tok_${i}`);
    }
    const l = layout(j.entries, 10);
    expect(l.lanes).toBe(4);
    expect(new Set(l.tokens.map((t) => t.lane)).size).toBe(4);
    // Valid past now: the bars run on past the right edge.
    expect(l.tokens.every((t) => t.openEnd && t.x2 === WIDTH - PAD)).toBe(true);
    expectNoCollisions(l);
  });

  it("a revocation mid-token ends the bar at the action that revoked it, before its exp", () => {
    const j = journal();
    j.token(0, "tok_r");
    j.pay(1, "tok_r");
    const refused = j.pay(3, "tok_r", { code: "token_revoked" });
    const marks: LayoutMark[] = [{ kind: "actions", at: at(2), label: "revoke_token" }];
    const l = layout(j.entries, 4, marks);

    const r = bar(l, "tok_r");
    expect(r).toMatchObject({ endedEarlyAt: at(2), endedWhy: "revoked", expiresAt: at(60), openEnd: false });
    expect(r.x2).toBeCloseTo(xAt(l, 2), 6);
    expect(mark(l, refused.id)).toMatchObject({ outcome: "refused", afterEnd: true, x: xAt(l, 3) });
    expect(l.markers).toEqual([{ kind: "actions", at: at(2), x: xAt(l, 2), label: "revoke_token" }]);

    // Without the action in view, the first refusal says when.
    const bare = layout(j.entries, 4);
    expect(bar(bare, "tok_r")).toMatchObject({ endedEarlyAt: at(3), endedWhy: "revoked" });
  });

  it("token-expires-after-calls: the 4th call's expiry ends the bar early there, with the rule marked", () => {
    const j = journal();
    j.token(0, "tok_1");
    for (const m of [1, 2, 3]) j.pay(m, "tok_1");
    const fourth = j.pay(4, "tok_1", { code: "token_expired", rules: ["token-expires-after-calls/expire-on-fourth-call"] });
    j.token(5, "tok_2");
    j.pay(6, "tok_2");
    const l = layout(j.entries, 7);

    expect(bar(l, "tok_1")).toMatchObject({ endedEarlyAt: at(4), endedWhy: "expired early", expiresAt: at(60) });
    expect(bar(l, "tok_1").x2).toBeCloseTo(xAt(l, 4), 6);
    expect(bar(l, "tok_2")).toMatchObject({ issuedAt: at(5), openEnd: true });
    expect(bar(l, "tok_2").endedWhy).toBeUndefined();
    // The second bar starts after the first ended: one lane is enough.
    expect(l.lanes).toBe(1);
    expect(mark(l, fourth.id)).toMatchObject({ outcome: "refused", rules: ["token-expires-after-calls/expire-on-fourth-call"], lane: 0 });
    expect(l.markers).toEqual([
      { kind: "rule", at: at(4), x: xAt(l, 4), label: "token-expires-after-calls/expire-on-fourth-call", request: fourth.id },
    ]);
    expect(describeTimeline(l)).toBe("Timeline: 2 tokens, 7 requests, 1 refused");
  });

  it("an empty journal: no bars or marks, a minute of axis ending now", () => {
    const l = layout([], 0);
    expect(l).toMatchObject({ tokens: [], requests: [], markers: [], lanes: 0, noTokenLane: null });
    expect(l.range).toEqual({ start: T0 - 60_000, end: T0 });
    expect(l.ticks.length).toBeGreaterThanOrEqual(2);
    expect(l.ticks.at(-1)).toEqual({ x: WIDTH - PAD, label: "09:00:00" });
    expect(describeTimeline(l)).toBe("Timeline: 0 tokens, 0 requests, 0 refused");
  });

  it("a clock jump of 61 m: the range covers it, and the marks stay in the order they came", () => {
    const j = journal();
    j.token(0, "tok_a");
    j.pay(0.2, "tok_a");
    j.pay(0.4, "tok_a");
    j.token(61.5, "tok_b");
    j.pay(61.6, "tok_b");
    const l = layout(j.entries, 62, [{ kind: "clock", at: at(61.4), label: "+61m" }]);

    expect(l.range.start).toBeLessThanOrEqual(T0);
    expect(l.range.end).toBe(T0 + 62 * 60_000);
    const xs = l.requests.map((r) => r.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(xs.length);
    const clock = l.markers.find((m) => m.kind === "clock")!;
    expect(clock.x).toBeGreaterThan(mark(l, "req_3").x);
    expect(clock.x).toBeLessThan(mark(l, "req_4").x);
    expect(l.ticks.map((t) => t.label)).toContain("09:30");
    expect(l.requests.every((r) => r.x >= PAD && r.x <= WIDTH - PAD)).toBe(true);
    expectNoCollisions(l);
  });

  it("requests with no token go in their own row below the token lanes", () => {
    const j = journal();
    const badSecret = j.other(0, { path: "/api/v2/token", endpoint: "token", status: 401, code: "invalid_client" });
    j.token(1, "tok_a");
    const bare = j.pay(2, undefined, { code: "token_missing" });
    const down = j.other(3, { path: "/api/v2/token", endpoint: "token", status: 503, code: "upstream_unavailable" });
    const l = layout(j.entries, 4);

    expect(l.lanes).toBe(2);
    expect(l.noTokenLane).toBe(1);
    for (const r of [badSecret, bare, down]) expect(mark(l, r.id).lane).toBe(1);
    expect(mark(l, "req_2").lane).toBe(0);
    expect(mark(l, down.id).outcome).toBe("error");
    expect(describeTimeline(l)).toBe("Timeline: 1 token, 4 requests, 2 refused, 1 failed");
  });

  it("a token the journal never saw issued (a minted one) is a bar from its first to its last use", () => {
    const j = journal();
    j.pay(1, "tok_minted", { code: "token_unknown_kid" });
    j.pay(3, "tok_minted", { code: "token_unknown_kid" });
    const l = layout(j.entries, 4);
    const m = bar(l, "tok_minted");
    expect(m.issuedAt).toBeUndefined();
    expect(m.openEnd).toBe(false);
    expect(m.x1).toBeCloseTo(xAt(l, 1), 6);
    expect(m.x2).toBeCloseTo(xAt(l, 3), 6);
  });
});
