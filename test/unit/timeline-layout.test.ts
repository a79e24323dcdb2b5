import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../ui/src/types.js";
import { describeTimeline, layoutTimeline, PAD, type TimelineLayout } from "../../ui/src/panels/timeline-layout.js";
import type { TimelineMark } from "../../ui/src/panels/props.js";
import { spanText, timeScale } from "../../ui/src/panels/time-scale.js";

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

const layout = (entries: JournalEntry[], now: number, marks: TimelineMark[] = []) => layoutTimeline({ entries, marks, now: at(now), width: WIDTH });
const bar = (l: TimelineLayout, jti: string) => l.tokens.find((t) => t.jti === jti)!;
const mark = (l: TimelineLayout, id: string) => l.requests.find((r) => r.id === id)!;

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
    expect(a.x1).toBe(mark(l, "req_1").x);
    // Its end (exp, 60 m) lies after the last good call and before the clock move past it.
    expect(a.x2).toBeGreaterThan(mark(l, "req_4").x);
    expect(a.x2).toBeLessThan(l.markers.find((m) => m.kind === "clock")!.x);
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
    }
    // Short-lived: each ends before the next is fetched.
    const byStart = [...l.tokens].sort((a, b) => a.x1 - b.x1);
    for (const [i, b] of byStart.slice(1).entries()) expect(byStart[i]!.x2).toBeLessThan(b.x1);
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
    const marks: TimelineMark[] = [{ kind: "actions", at: at(2), label: "revoke_token" }];
    const l = layout(j.entries, 4, marks);

    const r = bar(l, "tok_r");
    expect(r).toMatchObject({ endedEarlyAt: at(2), endedWhy: "revoked", expiresAt: at(60), openEnd: false });
    expect(l.markers).toEqual([{ kind: "actions", at: at(2), x: r.x2, label: "revoke_token" }]);
    expect(r.x2).toBeGreaterThan(mark(l, "req_2").x);
    expect(mark(l, refused.id)).toMatchObject({ outcome: "refused", afterEnd: true });
    expect(mark(l, refused.id).x).toBeGreaterThan(r.x2);

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
    expect(bar(l, "tok_1").x2).toBe(mark(l, fourth.id).x);
    expect(bar(l, "tok_2")).toMatchObject({ issuedAt: at(5), openEnd: true });
    expect(bar(l, "tok_2").endedWhy).toBeUndefined();
    // The second bar starts after the first ended: one lane is enough.
    expect(l.lanes).toBe(1);
    expect(mark(l, fourth.id)).toMatchObject({ outcome: "refused", rules: ["token-expires-after-calls/expire-on-fourth-call"], lane: 0 });
    expect(l.markers).toEqual([
      { kind: "rule", at: at(4), x: mark(l, fourth.id).x, label: "token-expires-after-calls/expire-on-fourth-call", request: fourth.id },
    ]);
    expect(describeTimeline(l)).toBe("Timeline: 2 tokens, 7 requests, 1 refused");
  });

  it("an empty journal: no bars or marks, a minute of axis ending now", () => {
    const l = layout([], 0);
    expect(l).toMatchObject({ tokens: [], requests: [], markers: [], breaks: [], lanes: 0, noTokenLane: null });
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
    // The hour is drawn shorter than the rest would make it, said as a break of its true length.
    // (tok_a's exp, at 60 m, is a moment of its own within it.)
    const tokA = bar(l, "tok_a");
    expect(l.breaks).toEqual([
      { x1: mark(l, "req_3").x, x2: tokA.x2, ms: 59.6 * 60_000, label: "60m" },
      { x1: tokA.x2, x2: clock.x, ms: 1.4 * 60_000, label: "1m" },
    ]);
    expect(clock.x - mark(l, "req_3").x).toBeLessThan((WIDTH - 2 * PAD) * 0.6);
    // Calls 12 s apart stay legibly apart however long the rest is.
    expect(mark(l, "req_2").x - mark(l, "req_1").x).toBeGreaterThan(20);
    expect(l.ticks[0]).toEqual({ x: PAD, label: "09:00:00" });
    expect(l.ticks.at(-1)).toEqual({ x: WIDTH - PAD, label: "10:02:00" });
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
    expect(m.x1).toBe(mark(l, "req_1").x);
    expect(m.x2).toBe(mark(l, "req_2").x);
  });

  it("a burst of calls milliseconds apart is spread out, in order, not drawn on one point", () => {
    const j = journal();
    j.token(0, "tok_a");
    for (let i = 1; i <= 6; i++) j.pay(i / 60_000, "tok_a"); // 1 ms apart
    const l = layout(j.entries, 2);
    const xs = l.requests.map((r) => r.x);
    for (const [i, x] of xs.slice(1).entries()) expect(x - xs[i]!).toBeGreaterThan(5);
  });
});

describe("time scale", () => {
  it("keeps moments in order and apart; a longer gap is wider, long ones are breaks", () => {
    const s = timeScale([0, 1, 2, 1_000, 3_600_000, 3_600_500], 0, 100);
    const xs = [0, 1, 2, 1_000, 3_600_000, 3_600_500].map(s.x);
    expect(xs[0]).toBe(0);
    expect(xs.at(-1)).toBe(100);
    for (const [i, x] of xs.slice(1).entries()) expect(x).toBeGreaterThan(xs[i]!);
    expect(xs[4]! - xs[3]!).toBeGreaterThan(xs[3]! - xs[2]!);
    expect(s.breaks).toEqual([{ x1: xs[3], x2: xs[4], ms: 3_599_000 }]);
    // Within a gap, linear; outside the range, at its edges.
    expect(s.x(1_500)).toBeCloseTo(xs[3]! + ((xs[4]! - xs[3]!) * 500) / 3_599_000, 9);
    expect(s.x(-5)).toBe(0);
    expect(s.x(9e12)).toBe(100);
  });

  it("says a gap's length the way the axis shows it", () => {
    expect([45_000, 61 * 60_000, 125 * 60_000, 3 * 86_400_000].map(spanText)).toEqual(["45s", "61m", "2h5m", "3d"]);
  });

  it("on a frozen clock, requests at one instant each get a place, in order, and the token's bar runs from the call that got it to the call refused with it", () => {
    const j = journal();
    j.token(0, "t1");
    j.pay(0, "t1");
    j.pay(0, "t1");
    j.pay(0, "t1");
    j.pay(0, "t1", { code: "token_expired", rules: ["token-expires-after-calls/expire-on-fourth-call"] });
    const l = layout(j.entries, 61, [{ kind: "actions", at: at(0), label: "revoke_token" }]);
    const xs = ["req_1", "req_2", "req_3", "req_4", "req_5"].map((id) => mark(l, id).x);
    for (let i = 1; i < xs.length; i++) expect(xs[i]!).toBeGreaterThan(xs[i - 1]!);
    // The marks still say the real time.
    expect(l.requests.map((r) => r.at)).toEqual(Array(5).fill(at(0)));
    const t1 = bar(l, "t1");
    expect(t1.endedWhy).toBe("expired early");
    expect(t1.x1).toBe(mark(l, "req_1").x);
    expect(t1.x2).toBe(mark(l, "req_5").x);
    expect(mark(l, "req_5").outcome).toBe("refused");
    // The action at that instant came after the calls that reached it; it keeps its real time.
    const action = l.markers.find((m) => m.kind === "actions")!;
    expect(action.at).toBe(at(0));
    expect(action.x).toBeGreaterThan(mark(l, "req_5").x);
    expectNoCollisions(l);
  });

  it("a clock set back (a reset) keeps its real times: a token issued after it has its whole bar, and its calls are not drawn past its end", () => {
    const j = journal();
    j.token(30, "t1");
    j.pay(31, "t1");
    // The session was reset: its clock starts again at 0.
    j.token(0, "t2");
    j.pay(1, "t2");
    const l = layout(j.entries, 2);
    const t2 = bar(l, "t2");
    expect(t2.x2).toBeGreaterThan(t2.x1);
    expect(mark(l, "req_4").afterEnd).toBe(false);
    expect(mark(l, "req_4").x).toBeGreaterThan(t2.x1);
    expect(mark(l, "req_3").x).toBeLessThan(mark(l, "req_1").x);
  });
});
