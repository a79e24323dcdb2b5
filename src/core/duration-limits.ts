import { parseDuration } from "./duration.js";

/**
 * The longest duration each setting or action takes, stated once for the schemas, the checks at
 * run time and the docs. Without them a `delay: 100000h` passed and became a 1 ms timer (setTimeout
 * takes at most 2^31-1 ms and falls back to 1), and `retry_after: 1e30` sent `Retry-After: 1e+30`.
 */
export interface DurationLimit {
  readonly ms: number;
  /** As messages and the docs state it. */
  readonly text: string;
}

const limit = (ms: number, text: string): DurationLimit => ({ ms, text });
/** Ten years keeps every exp and nbf a date that clients and the journal can carry. */
const TEN_YEARS = limit(3650 * 86_400_000, "3650d (ten years)");

export const DURATION_LIMITS = {
  /** A rule's `delay`, and the delays of the rules one request fires, added up: a few minutes. */
  delay: limit(5 * 60_000, "5m"),
  /** `respond.retry_after`: whole seconds (Retry-After is an integer), a day at most. */
  retryAfter: limit(86_400_000, "1d (86400 seconds)"),
  /** `issue_token.not_before`: as far ahead as a token may live. */
  notBefore: TEN_YEARS,
  /** A token's lifetime (`token_ttl`, a profile's `jwt.ttl`, `--token-ttl`). */
  tokenTtl: TEN_YEARS,
  /** The clock skew tolerated (`leeway`, `--leeway`). */
  leeway: limit(86_400_000, "1d"),
  /** How long an unused session lives (`--session-idle-ttl`). */
  sessionIdle: limit(30 * 86_400_000, "30d"),
  /** The server's `--headers-timeout` and `--request-timeout`. */
  serverTimeout: limit(3_600_000, "1h"),
  /** serve's `--shutdown-grace`: setTimeout could wait ~24.8 days, a drain never needs that long. */
  shutdownGrace: limit(3_600_000, "1h"),
  /** The event streams' keep-alive period (`eventHeartbeatMs`). */
  heartbeat: limit(3_600_000, "1h"),
} as const;

/** The milliseconds of a duration, or NaN when it is not one (its syntax is someone else's message). */
export function durationMsOrNaN(value: string | number): number {
  try {
    return parseDuration(value);
  } catch {
    return Number.NaN;
  }
}

/** Whether a duration is within its limit; true for what is not a duration (refused for that elsewhere). */
export function withinLimit(value: string | number, max: DurationLimit): boolean {
  return !(durationMsOrNaN(value) > max.ms);
}

/** Whether a duration is whole seconds; true for what is not a duration. */
export function wholeSeconds(value: string | number): boolean {
  const ms = durationMsOrNaN(value);
  return Number.isNaN(ms) || ms % 1000 === 0;
}
