/**
 * A time a profile template may print (now, a token's expiry, a payment's creation): kept as
 * seconds until rendered, so one value serves every format a provider uses. `{{now}}` renders in
 * the value's own default format, `{{now:unix}}` in the one named.
 */

export const TIME_FORMATS = [
  "rfc3339",
  "rfc3339-ms",
  "rfc3339-us",
  "rfc3339-100ns",
  "rfc3339-ns",
  "rfc3339-offset",
  "rfc3339-ms-offset",
  "unix",
  "unix-ms",
  "http-date",
] as const;
export type TimeFormat = (typeof TIME_FORMATS)[number];

const DATE = "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}";
/**
 * What each format prints, as a regular expression (unanchored, Unicode mode): the OpenAPI
 * document's time patterns (template-schema.ts) and the times calibrate reads (cli/calibrate/per-request.ts).
 */
export const TIME_PATTERNS: Readonly<Record<TimeFormat, string>> = {
  rfc3339: `${DATE}Z`,
  "rfc3339-ms": `${DATE}\\.\\d{3}Z`,
  // Six fraction digits (Python's isoformat, Java's Instant with micros), seven (.NET's "o"), nine (Go's RFC3339Nano, untrimmed).
  "rfc3339-us": `${DATE}\\.\\d{6}Z`,
  "rfc3339-100ns": `${DATE}\\.\\d{7}Z`,
  "rfc3339-ns": `${DATE}\\.\\d{9}Z`,
  "rfc3339-offset": `${DATE}\\+00:00`,
  "rfc3339-ms-offset": `${DATE}\\.\\d{3}\\+00:00`,
  unix: "\\d+",
  "unix-ms": "\\d+",
  "http-date": "[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT",
};

/** The fraction digits past the milliseconds each finer format prints. */
const FINER_DIGITS: Partial<Record<TimeFormat, number>> = { "rfc3339-us": 3, "rfc3339-100ns": 4, "rfc3339-ns": 6 };

export function isTimeFormat(name: string): name is TimeFormat {
  return (TIME_FORMATS as readonly string[]).includes(name);
}

export class TimeValue {
  constructor(
    /** Seconds since 1970 (a NumericDate; may carry a fraction). */
    readonly seconds: number,
    /** How `{{name}}` without a format prints it. */
    readonly defaultFormat: TimeFormat = "rfc3339-ms",
  ) {}

  /** The time in `format`: a number for unix and unix-ms, else text. */
  format(format: TimeFormat = this.defaultFormat): string | number {
    return formatTime(this.seconds, format);
  }
}

export function formatTime(seconds: number, format: TimeFormat): string | number {
  if (format === "unix") return Math.floor(seconds);
  if (format === "unix-ms") return Math.floor(seconds * 1000);
  const date = new Date(Math.floor(seconds * 1000));
  // A time no Date can hold (a forged exp): printed as the number it is rather than "Invalid Date".
  if (Number.isNaN(date.getTime())) return String(seconds);
  if (format === "http-date") return date.toUTCString();
  const withMs = date.toISOString();
  const finer = FINER_DIGITS[format];
  // Past the millisecond the sandbox's clock has nothing to say: the digits a provider prints there are zeros.
  if (finer !== undefined) return withMs.replace(/Z$/, `${"0".repeat(finer)}Z`);
  const base = format === "rfc3339" || format === "rfc3339-offset" ? withMs.replace(/\.\d{3}Z$/, "Z") : withMs;
  return format.endsWith("-offset") ? base.replace(/Z$/, "+00:00") : base;
}
