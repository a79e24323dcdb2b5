import type { MatchFile, RuleFile, ThenFile } from "./schema.js";

/**
 * One short human line of what a scenario rule scripts, from its `match` and `then`: what the QA
 * page lists under each scenario, e.g. "payment, cashout · 4th call → expire_token: presented".
 * The conditions are joined with " · ", the actions with ", ". Never a value that is a credential
 * (rotate_secret's new secret) nor a scripted answer's body. Pure: the same rule, the same line.
 */
export function ruleSummary(rule: RuleFile): string {
  return `${matchSummary(rule.match)} → ${thenSummary(rule.then)}`;
}

/** A rule's name as X-Sandbox-Rule and the journal give it: its own, or its place in the file. */
export function ruleName(rule: RuleFile, index: number): string {
  return rule.name ?? `rules[${index}]`;
}

type Duration = string | number;
/** A duration as the file wrote it; a bare number is seconds. */
const duration = (d: Duration): string => (typeof d === "number" ? `${d}s` : d);
const list = <T extends string>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

/** 1st, 2nd, 3rd, 4th … 11th, 12th, 13th … 21st. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

function callsSummary(c: NonNullable<MatchFile["calls"]>): string | undefined {
  if (c.nth !== undefined) return `${ordinal(c.nth)} call`;
  const from = c.from ?? 1;
  if (c.times === undefined) return c.from === undefined ? undefined : `from the ${ordinal(from)} call`;
  if (c.times === 1) return `${ordinal(from)} call`;
  return from === 1 ? `first ${c.times} calls` : `calls ${from}–${from + c.times - 1}`;
}

/**
 * Every condition of `match`, in this order. Typed by the schema's keys, so a condition added to
 * the schema does not compile until it is summarised here.
 */
const MATCH_PARTS: { [K in keyof Required<MatchFile>]: (v: NonNullable<MatchFile[K]>) => string | undefined } = {
  endpoint: (v) => (list(v).includes("any") ? "any endpoint" : list(v).join(", ")),
  method: (v) => list(v).join(", "),
  path: (v) => v,
  merchant: (v) => `merchant ${v}`,
  state: (v) => `state ${v}`,
  clock: (v) =>
    [v.after !== undefined && `after ${duration(v.after)}`, v.before !== undefined && `before ${duration(v.before)}`].filter(Boolean).join(" · ") ||
    undefined,
  calls: callsSummary,
};

function matchSummary(match: MatchFile | undefined): string {
  const parts: string[] = [];
  for (const [key, part] of Object.entries(MATCH_PARTS) as Array<[keyof MatchFile, (v: unknown) => string | undefined]>) {
    const value = match?.[key];
    const text = value === undefined ? undefined : part(value);
    if (text) parts.push(text);
  }
  return parts.length ? parts.join(" · ") : "every request";
}

type Respond = NonNullable<ThenFile["respond"]>;
function respondSummary(r: Respond): string {
  const details = [
    r.retry_after !== undefined && `retry_after ${duration(r.retry_after)}`,
    r.headers && `headers ${Object.keys(r.headers).join(", ")}`,
  ].filter(Boolean);
  return `respond: ${r.status}${details.length ? ` (${details.join(", ")})` : ""}`;
}

/**
 * Every action of `then`, in the schema's order; a flag is its name, a value follows a colon.
 * Typed by the schema's keys, so an action added to the schema does not compile until it is
 * summarised here.
 */
const THEN_PARTS: { [K in keyof Required<ThenFile>]: (v: NonNullable<ThenFile[K]>) => string } = {
  respond: respondSummary,
  delay: (v) => `delay: ${duration(v)}`,
  drop_connection: () => "drop_connection",
  reject_credentials: () => "reject_credentials",
  disable_merchant: () => "disable_merchant",
  enable_merchant: () => "enable_merchant",
  // The new secret is a credential: only that it rotates.
  rotate_secret: () => "rotate_secret",
  revoke_token: (v) => `revoke_token: ${v}`,
  expire_token: (v) => `expire_token: ${v}`,
  issue_token: (v) => {
    const how = [v.expired && "expired", v.not_before !== undefined && `not_before ${duration(v.not_before)}`].filter(Boolean);
    return how.length ? `issue_token: ${how.join(" + ")}` : "issue_token";
  },
  rotate_signing_key: (v) => (v !== true && v.keep_old ? "rotate_signing_key: keep_old" : "rotate_signing_key"),
  expire_payment_token: () => "expire_payment_token",
  revoke_payment_token: () => "revoke_payment_token",
  login_gone: () => "login_gone",
  advance_clock: (v) => `advance_clock: ${duration(v)}`,
  set_state: (v) => `set_state: ${v}`,
};

function thenSummary(then: ThenFile): string {
  const parts: string[] = [];
  for (const [key, part] of Object.entries(THEN_PARTS) as Array<[keyof ThenFile, (v: unknown) => string]>) {
    const value = then[key];
    if (value !== undefined) parts.push(part(value));
  }
  return parts.join(", ");
}
