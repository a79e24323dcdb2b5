/**
 * Durations the human way: `90s`, `59m`, `1h`, `1h30m`, `500ms`, or a bare number of seconds
 * (as in `--token-ttl 3600`). Returns milliseconds, or throws a RangeError that says what is
 * accepted.
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

export function parseDuration(input: string | number, what = "duration"): number {
  if (typeof input === "number") {
    if (!Number.isFinite(input) || input < 0) throw new RangeError(`${what} must be a non-negative number of seconds, got ${input}`);
    return input * 1000;
  }
  const text = input.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  let total = 0;
  let pos = 0;
  PART.lastIndex = 0;
  while (pos < text.length) {
    PART.lastIndex = pos;
    const m = PART.exec(text);
    if (!m) break;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = PART.lastIndex;
  }
  if (text.length === 0 || pos !== text.length) {
    throw new RangeError(`${what} '${input}' is not a duration; write it like 90s, 59m, 1h, 1h30m, 500ms or a number of seconds`);
  }
  return total;
}

/** Milliseconds as the shortest text parseDuration reads back: 3_600_000 is `1h`, 90_000 is `90s`, 0 is `0s`. */
export function durationText(ms: number): string {
  if (ms === 0) return "0s";
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Seconds, for claims and `expires_in`. */
export function parseDurationSeconds(input: string | number, what?: string): number {
  return Math.round(parseDuration(input, what) / 1000);
}

/** A duration that may be negative ("-2h" moves a clock back): milliseconds. */
export function parseSignedDuration(input: string | number, what?: string): number {
  if (typeof input === "string" && input.trim().startsWith("-")) return -parseDuration(input.trim().slice(1), what);
  return parseDuration(input, what);
}
