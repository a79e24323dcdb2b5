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
  "unix-fraction",
  "http-date",
  "rfc850",
  "ctime",
  "dotnet-general",
  "rfc3339-nano",
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
  // Python's time.time(), PHP's microtime(true): seconds with a fraction.
  "unix-fraction": "\\d+\\.\\d+",
  // RFC 9110's preferred form (RFC 1123's), and the two obsolete forms it still reads.
  "http-date": "[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT",
  rfc850: "[A-Z][a-z]{5,8}, \\d{2}-[A-Z][a-z]{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} GMT",
  ctime: "[A-Z][a-z]{2} [A-Z][a-z]{2} [ \\d]\\d \\d{2}:\\d{2}:\\d{2} \\d{4}",
  // .NET's DateTime.ToString() under the invariant culture (IdentityModel's IDX10223 "ValidTo (UTC): '...'").
  "dotnet-general": "\\d{2}/\\d{2}/\\d{4} \\d{2}:\\d{2}:\\d{2}",
  // Go's time.RFC3339Nano (a time.Time in JSON): up to nine digits, trailing zeros trimmed, none when zero.
  "rfc3339-nano": `${DATE}(?:\\.\\d{1,9})?Z`,
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
  if (format === "unix-fraction") return Math.floor(seconds * 1000) / 1000;
  const date = new Date(Math.floor(seconds * 1000));
  // A time no Date can hold (a forged exp): printed as the number it is rather than "Invalid Date".
  if (Number.isNaN(date.getTime())) return String(seconds);
  if (format === "http-date") return date.toUTCString();
  const older = OLDER_FORMS[format];
  if (older) return older(date);
  const withMs = date.toISOString();
  if (format === "rfc3339-nano") return withMs.replace(/\.?0*Z$/, "Z");
  const finer = FINER_DIGITS[format];
  // Past the millisecond the sandbox's clock has nothing to say: the digits a provider prints there are zeros.
  if (finer !== undefined) return withMs.replace(/Z$/, `${"0".repeat(finer)}Z`);
  const base = format === "rfc3339" || format === "rfc3339-offset" ? withMs.replace(/\.\d{3}Z$/, "Z") : withMs;
  return format.endsWith("-offset") ? base.replace(/Z$/, "+00:00") : base;
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");
const clock = (d: Date) => `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;

/** The forms that are not ISO 8601, each printed in UTC as its framework prints it. */
const OLDER_FORMS: Partial<Record<TimeFormat, (d: Date) => string>> = {
  rfc850: (d) => `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${two(d.getUTCFullYear() % 100)} ${clock(d)} GMT`,
  ctime: (d) =>
    `${DAYS[d.getUTCDay()]!.slice(0, 3)} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, " ")} ${clock(d)} ${d.getUTCFullYear()}`,
  "dotnet-general": (d) => `${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())}/${d.getUTCFullYear()} ${clock(d)}`,
};

type DateParts = [year: number, month: number, day: number, time: string];

/** How each older form is read: its pattern and the parts of its match. */
const OLDER_READERS: Partial<Record<TimeFormat, [RegExp, (m: RegExpExecArray) => DateParts]>> = {
  // RFC 9110 §5.6.7 reads a two-digit year as this century's unless more than 50 years ahead: so do we.
  rfc850: [/^[A-Za-z]+, (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\S+) GMT$/, (m) => [2000 + Number(m[3]), MONTHS.indexOf(m[2]!), Number(m[1]), m[4]!]],
  ctime: [/^[A-Z][a-z]{2} ([A-Z][a-z]{2}) +(\d{1,2}) (\S+) (\d{4})$/, (m) => [Number(m[4]), MONTHS.indexOf(m[1]!), Number(m[2]), m[3]!]],
  "dotnet-general": [/^(\d{2})\/(\d{2})\/(\d{4}) (\S+)$/, (m) => [Number(m[3]), Number(m[1]) - 1, Number(m[2]), m[4]!]],
};

/**
 * A time printed in one of the forms above, read back as seconds (UTC: none of them names a zone
 * but GMT, and Date.parse would read two of them in the machine's local time); undefined otherwise.
 */
export function parseOlderForm(format: TimeFormat, text: string): number | undefined {
  const reader = OLDER_READERS[format];
  const m = reader?.[0].exec(text);
  if (!reader || !m) return undefined;
  const [year, month, day, time] = reader[1](m);
  if (month < 0) return undefined;
  const [h, min, sec] = time.split(":").map(Number) as [number, number, number];
  const ms = Date.UTC(year, month, day, h, min, sec);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}
