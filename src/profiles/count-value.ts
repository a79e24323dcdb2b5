/**
 * `{{count_down:N}}` and `{{count_up}}`: a number that moves by one per answer, as the counting
 * headers of a provider's gateway do (`X-RateLimit-Remaining: 59, 58, ...`). The sandbox has no
 * rate limit: the counter only moves the way a client reading it expects, N-1 down to 0 and back
 * to N-1, or 1, 2, 3 up from its start. Each shaper counts the answers it renders, once per
 * request however many of its templates print the count.
 */

/** The highest start a counter may name: far above any real limit, well inside a safe integer. */
export const MAX_COUNTER_START = 1_000_000_000;

/** The count of one answer, printed as its template's format asks. */
export class CountValue {
  constructor(
    /** This answer's place among the shaper's answers, from 0. */
    readonly index: number,
    readonly direction: "down" | "up",
  ) {}

  /** down: `format` is the limit N (required by the loader); up: the start (default 0). */
  format(format: string | undefined): number {
    const n = Number(format ?? 0);
    return this.direction === "down" ? n - 1 - (this.index % n) : n + this.index + 1;
  }
}

/** Numbers the answers of one shaper: the same number for every template of one request. */
export class AnswerCounter {
  private next = 0;
  private readonly seen = new WeakMap<object, number>();

  indexOf(request: object): number {
    let index = this.seen.get(request);
    if (index === undefined) {
      // Past a safe integer the modulo would stop moving: a count that long starts again.
      index = this.next;
      this.next = this.next >= Number.MAX_SAFE_INTEGER - 1 ? 0 : this.next + 1;
      this.seen.set(request, index);
    }
    return index;
  }
}

/** Whether a counter's format is one the loader accepts, and the problem when it is not. */
export function counterFormatProblem(name: "count_down" | "count_up", format: string | undefined): string | undefined {
  if (format === undefined)
    return name === "count_down"
      ? "'{{count_down}}' needs the limit it counts down from: write {{count_down:60}} (the first answer says 59)"
      : undefined;
  const n = /^\d{1,10}$/.test(format) ? Number(format) : Number.NaN;
  const least = name === "count_down" ? 1 : 0;
  if (Number.isInteger(n) && n >= least && n <= MAX_COUNTER_START) return undefined;
  return `'{{${name}:${format}}}': ${name === "count_down" ? "the limit" : "the start"} must be a whole number from ${least} to ${MAX_COUNTER_START}, such as {{${name}:${name === "count_down" ? 60 : 0}}}`;
}
