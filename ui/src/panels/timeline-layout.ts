/**
 * The timeline's picture worked out from a session's journal, with no DOM: each access token a bar
 * from issue to expiry (or to the moment it was revoked or expired early), each request a mark in
 * the lane of the token it presented or was issued, and the clock moves, actions and fired rules
 * as markers, all in abstract x coordinates (0..width) on the session clock. Pure, so the unit
 * tests can check the picture a journal gives without a browser.
 *
 * Imports carry ".js": this module is also compiled by the root tsconfig (NodeNext) for its tests.
 */
import type { JournalEntry } from "../types.js";
import type { TimelineMark } from "./props.js";
import { type Outcome, outcomeOf } from "../format.js";
import { spanText, type TimeBreak, type TimeScale, timeScale } from "./time-scale.js";

/** As the journal table says it: refused is any 4xx, error a 5xx or a dropped connection (status 0). */
export type { Outcome };

export interface TokenBar {
  jti: string;
  lane: number;
  /** Absent when the journal does not hold the request that issued it (a minted token, or one rolled out of the journal). */
  issuedAt?: string;
  issuedBy?: string;
  expiresAt?: string;
  /** When it stopped working before its exp: a refusal (or the action before it) says so. */
  endedEarlyAt?: string;
  endedWhy?: "revoked" | "expired early";
  x1: number;
  x2: number;
  /** Still valid at the right edge: the bar goes on past it. */
  openEnd: boolean;
}

export interface RequestMark {
  id: string;
  at: string;
  x: number;
  /** The lane of its token's bar, or the "no token" row (`noTokenLane`). */
  lane: number;
  outcome: Outcome;
  status: number;
  method: string;
  path: string;
  code?: string;
  rules: string[];
  /** The token it presented or was issued. */
  token?: string;
  /** It presented its token at or after the bar's end (expiry, revocation): the refusals the picture is for. */
  afterEnd: boolean;
}

export interface Marker {
  kind: "clock" | "actions" | "rule";
  at: string;
  x: number;
  label: string;
  /** For a fired rule: the request it fired on. */
  request?: string;
}

export interface Tick {
  x: number;
  label: string;
}

/** A stretch of time drawn shorter than the rest (the axis is not linear there), with its true length. */
export interface AxisBreak extends TimeBreak {
  label: string;
}

export interface TimelineLayout {
  width: number;
  /** Epoch milliseconds on the session clock, at x = PAD and x = width - PAD (see time-scale.ts: not linear between). */
  range: { start: number; end: number };
  /** Rows: token lanes, then the "no token" row when a request carried none. */
  lanes: number;
  noTokenLane: number | null;
  tokens: TokenBar[];
  requests: RequestMark[];
  markers: Marker[];
  ticks: Tick[];
  breaks: AxisBreak[];
  summary: { tokens: number; requests: number; refused: number; errors: number };
}

/** Room at both edges, so a mark at the first or last moment is drawn whole. */
export const PAD = 12;
/** Bars closer than this in x share no lane, so their ends stay apart. */
const LANE_GAP = 6;
/** The least width a bar takes when placing it in a lane (a token used for one instant). */
const MIN_BAR = 4;
/** Axis labels at least this many units apart, so they never overlap. */
const TICK_SPACING = 80;

/** The token a request presented; a protected call that accepted one records it as tokenId. */
function presented(e: JournalEntry): string | undefined {
  return e.presentedTokenId ?? (e.endpoint !== "token" && e.endpoint !== "login" ? e.tokenId : undefined);
}

/** The token a request was issued: a successful exchange on the token endpoint. */
function issued(e: JournalEntry): string | undefined {
  if (!e.tokenId || outcomeOf(e) !== "ok") return undefined;
  return e.tokenExpiresAt !== undefined || e.endpoint === "token" ? e.tokenId : undefined;
}

interface TokenFacts {
  jti: string;
  issuedMs?: number;
  issuedBy?: string;
  expiresMs?: number;
  firstSeenMs: number;
  lastSeenMs: number;
  lastAcceptedMs?: number;
  endedMs?: number;
  endedWhy?: "revoked" | "expired early";
  /** An expired refusal with no exp known: the bar ends there, with no claim it was early. */
  refusedExpiredMs?: number;
}

const ms = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();

export function layoutTimeline(input: {
  entries: readonly JournalEntry[];
  marks: readonly TimelineMark[];
  now: string;
  width?: number;
}): TimelineLayout {
  const width = Math.max(200, input.width ?? 1000);
  const sorted = [...input.entries].sort((a, b) => a.seq - b.seq);
  const realTime = new Map(sorted.map((e) => [e.id, e.sandboxTime]));
  const entries = placeInOrder(sorted);
  const givenMarks = input.marks.filter((m) => Number.isFinite(ms(m.at)));
  const marks = givenMarks.map((m) => ({ ...m, at: iso(afterSameInstant(ms(m.at), sorted, entries)) }));
  const tokens = collectTokens(entries, marks);

  // The range: everything that happened, and now; an expiry far ahead is not stretched to, but
  // one within it is a moment of its own (where a bar ends).
  const happened = [ms(input.now), ...entries.map((e) => ms(e.sandboxTime)), ...marks.map((m) => ms(m.at))].filter(Number.isFinite);
  const first = Math.min(...happened);
  const last = Math.max(...happened);
  const ends = [...tokens.values()].map((t) => t.endedMs ?? t.expiresMs).filter((t): t is number => t !== undefined && t >= first && t <= last);
  const scale = timeScale([...happened, ...ends], PAD, width - PAD);
  const { x } = scale;
  const end = scale.end;

  const bars: TokenBar[] = [];
  for (const t of tokens.values()) {
    const begin = t.issuedMs ?? t.firstSeenMs;
    const stop = t.endedMs ?? t.expiresMs ?? t.refusedExpiredMs ?? (t.issuedMs === undefined ? t.lastSeenMs : undefined);
    const openEnd = stop === undefined || stop > end;
    bars.push({
      jti: t.jti,
      lane: 0,
      ...(t.issuedMs !== undefined && { issuedAt: iso(t.issuedMs) }),
      ...(t.issuedBy !== undefined && { issuedBy: t.issuedBy }),
      ...(t.expiresMs !== undefined && { expiresAt: iso(t.expiresMs) }),
      ...(t.endedMs !== undefined && { endedEarlyAt: iso(t.endedMs) }),
      ...(t.endedWhy !== undefined && { endedWhy: t.endedWhy }),
      x1: x(begin),
      x2: openEnd ? width - PAD : x(stop),
      openEnd,
    });
  }
  const tokenLanes = assignLanes(bars);
  const laneOf = new Map(bars.map((b) => [b.jti, b.lane]));

  let noToken = false;
  const requests: RequestMark[] = entries.map((e) => {
    const token = presented(e) ?? issued(e);
    const lane = token === undefined ? undefined : laneOf.get(token);
    if (lane === undefined) noToken = true;
    const t = ms(e.sandboxTime);
    const facts = token === undefined ? undefined : tokens.get(token);
    const barEnd = facts && (facts.endedMs ?? facts.expiresMs);
    return {
      id: e.id,
      at: realTime.get(e.id)!,
      x: x(t),
      lane: lane ?? tokenLanes,
      outcome: outcomeOf(e),
      status: e.status,
      method: e.method,
      path: e.path,
      ...(e.code !== undefined && { code: e.code }),
      rules: e.rules ?? [],
      ...(token !== undefined && { token }),
      afterEnd: presented(e) !== undefined && barEnd !== undefined && t >= barEnd,
    };
  });

  const markers: Marker[] = [
    ...marks.map((m, i) => ({ kind: m.kind, at: givenMarks[i]!.at, x: x(ms(m.at)), label: m.label })),
    ...entries
      .filter((e) => e.rules?.length)
      .map((e) => ({ kind: "rule" as const, at: realTime.get(e.id)!, x: x(ms(e.sandboxTime)), label: e.rules!.join(", "), request: e.id })),
  ].sort((a, b) => a.x - b.x);

  return {
    width,
    range: { start: scale.start, end: scale.end },
    lanes: tokenLanes + (noToken ? 1 : 0),
    noTokenLane: noToken ? tokenLanes : null,
    tokens: bars,
    requests,
    markers,
    ticks: axisTicks(scale),
    breaks: scale.breaks.map((b) => ({ ...b, label: spanText(b.ms) })),
    summary: {
      tokens: bars.length,
      requests: requests.length,
      refused: requests.filter((r) => r.outcome === "refused").length,
      errors: requests.filter((r) => r.outcome === "error").length,
    },
  };
}

/**
 * Where each request is placed on the axis: at its time on the session clock, except that requests
 * at the same instant (a frozen clock, or a burst within one millisecond) are a millisecond apart,
 * in journal order, so each gets a place of its own and a token's bar has a length between the
 * call that got it and the call refused with it. A few milliseconds off at most; the marks show
 * the real time.
 */
function placeInOrder(entries: readonly JournalEntry[]): JournalEntry[] {
  let lastReal = -Infinity;
  let lastPlaced = -Infinity;
  return entries.map((e) => {
    const t = ms(e.sandboxTime);
    if (!Number.isFinite(t)) return e;
    // Only the same instant, or a later one that the nudges already passed, is moved; a clock set
    // back (a reset, "Set time" earlier) keeps its real time, or a token issued after it would be
    // drawn ending before it starts, and its calls as made after its expiry.
    const placed = t >= lastReal && t <= lastPlaced ? lastPlaced + 1 : t;
    lastReal = t;
    lastPlaced = placed;
    return placed === t ? e : { ...e, sandboxTime: iso(placed) };
  });
}

/** A clock move or action at instant `t` goes after the requests placed at that instant (it came after the calls that reached it). */
function afterSameInstant(t: number, real: readonly JournalEntry[], placed: readonly JournalEntry[]): number {
  let at = t;
  for (let i = 0; i < real.length; i++) {
    if (ms(real[i]!.sandboxTime) === t) at = Math.max(at, ms(placed[i]!.sandboxTime) + 1);
  }
  return at;
}

/** Every token the journal shows, issued or only presented, with when and why it stopped working. */
function collectTokens(entries: readonly JournalEntry[], marks: readonly TimelineMark[]): Map<string, TokenFacts> {
  const tokens = new Map<string, TokenFacts>();
  const seen = (jti: string, t: number): TokenFacts => {
    let f = tokens.get(jti);
    if (!f) {
      f = { jti, firstSeenMs: t, lastSeenMs: t };
      tokens.set(jti, f);
    }
    f.firstSeenMs = Math.min(f.firstSeenMs, t);
    f.lastSeenMs = Math.max(f.lastSeenMs, t);
    return f;
  };
  for (const e of entries) {
    const t = ms(e.sandboxTime);
    if (!Number.isFinite(t)) continue;
    const got = issued(e);
    if (got !== undefined) {
      const f = seen(got, t);
      f.issuedMs = t;
      f.issuedBy = e.id;
      const exp = e.tokenExpiresAt === undefined ? NaN : ms(e.tokenExpiresAt);
      if (Number.isFinite(exp)) f.expiresMs = exp;
    }
    const used = presented(e);
    if (used === undefined) continue;
    const f = seen(used, t);
    if (outcomeOf(e) === "ok") f.lastAcceptedMs = t;
    if (f.endedMs !== undefined) continue;
    // A refusal as revoked, or as expired before its exp, is the token ending early; the first says when.
    const early = f.expiresMs === undefined || t < f.expiresMs;
    if (e.code === "token_revoked") endEarly(f, t, "revoked", marks);
    else if (e.code === "token_expired" && f.expiresMs !== undefined && early) endEarly(f, t, "expired early", marks);
    else if (e.code === "token_expired" && f.expiresMs === undefined) f.refusedExpiredMs ??= t;
  }
  return tokens;
}

/**
 * Ends a token at its first refusal, or earlier at the action that ended it ("revoke_token",
 * "expire_token" run on the session) when one lies between its last accepted use and that refusal.
 */
function endEarly(f: TokenFacts, refusedMs: number, why: "revoked" | "expired early", marks: readonly TimelineMark[]): void {
  const word = why === "revoked" ? "revoke_token" : "expire_token";
  const after = f.lastAcceptedMs ?? f.issuedMs ?? f.firstSeenMs;
  const action = marks
    .filter((m) => m.kind === "actions" && m.label.includes(word))
    .map((m) => ms(m.at))
    .filter((t) => t >= after && t <= refusedMs)
    .sort((a, b) => a - b)[0];
  f.endedMs = action ?? refusedMs;
  f.endedWhy = why;
}

/** Greedy interval partitioning: each bar takes the first lane free at its start, so bars never overlap. */
function assignLanes(bars: TokenBar[]): number {
  const laneEnds: number[] = [];
  const order = [...bars].sort((a, b) => a.x1 - b.x1 || a.x2 - b.x2);
  for (const bar of order) {
    let lane = laneEnds.findIndex((endX) => endX + LANE_GAP <= bar.x1);
    if (lane < 0) lane = laneEnds.length;
    laneEnds[lane] = Math.max(bar.x2, bar.x1 + MIN_BAR);
    bar.lane = lane;
  }
  return laneEnds.length;
}

/**
 * Labels at the moments the scale was built from (the axis is not linear, so round times would
 * mislead), as many as fit apart; the last one, now, always gets one.
 */
function axisTicks(scale: TimeScale): Tick[] {
  const ticks: Tick[] = [];
  for (const [i, stop] of scale.stops.entries()) {
    const label = iso(stop.t).slice(11, 19);
    const prev = ticks.at(-1);
    const isLast = i === scale.stops.length - 1;
    if (prev && prev.label === label) continue;
    if (prev && stop.x - prev.x < TICK_SPACING) {
      if (!isLast || ticks.length === 1) continue;
      ticks.pop();
    }
    ticks.push({ x: stop.x, label });
  }
  return ticks;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The picture in one sentence: the svg's accessible name. */
export function describeTimeline(layout: TimelineLayout): string {
  const { tokens, requests, refused, errors } = layout.summary;
  const failed = errors ? `, ${errors} failed` : "";
  return `Timeline: ${plural(tokens, "token")}, ${plural(requests, "request")}, ${refused} refused${failed}`;
}
