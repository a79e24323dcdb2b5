import { ConfigError } from "../core/config.js";
import { parseDuration } from "../core/duration.js";
import { DURATION_LIMITS } from "../core/duration-limits.js";

/** The checks and conversions of createSandbox's numeric, duration and date options. */

export function positiveInt(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${name} must be a whole number of at least 1, got ${String(value)}`, name);
  return value;
}

export function heartbeatMs(value: number): number {
  // Past setInterval's maximum (~24.8 days) node would fire every millisecond instead.
  if (!Number.isInteger(value) || value < 0 || value > DURATION_LIMITS.heartbeat.ms)
    throw new ConfigError(
      `eventHeartbeatMs must be a whole number of milliseconds from 0 (none) to ${DURATION_LIMITS.heartbeat.ms} (${DURATION_LIMITS.heartbeat.text}), got ${String(value)}`,
      "eventHeartbeatMs",
    );
  return value;
}

export function sessionIdleMs(value: string | number): number {
  try {
    const ms = parseDuration(value, "sessionIdleTtl");
    if (ms < 1000) throw new RangeError("sessionIdleTtl must be at least 1s");
    // A session's expires_at must stay a date (1e30 made every creation a 500).
    if (ms > DURATION_LIMITS.sessionIdle.ms)
      throw new RangeError(`sessionIdleTtl must be at most ${DURATION_LIMITS.sessionIdle.text}, got '${value}'`);
    return ms;
  } catch (e) {
    throw new ConfigError((e as Error).message, "sessionIdleTtl");
  }
}

export function toInstant(value: Date | number | string): Date | number {
  if (typeof value !== "string") return value;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new ConfigError(`frozenAt '${value}' is not a date; write it like 2026-01-01T00:00:00Z`);
  return d;
}
