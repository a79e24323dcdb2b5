/**
 * The timeline's time axis. A client's calls come in bursts milliseconds apart, separated by long
 * quiet stretches (a clock moved by 61 m): on a linear axis a whole burst would fall on one pixel.
 * So each stretch between two moments that matter gets width growing with the log of its length:
 * every moment stays apart and in order, a long gap stays longer than a short one, and gaps that
 * were shortened are reported as breaks the axis shows with their true length.
 */

export interface TimeBreak {
  x1: number;
  x2: number;
  /** The gap's true length on the session clock. */
  ms: number;
}

export interface TimeScale {
  start: number;
  end: number;
  x: (t: number) => number;
  /** The moments the scale was built from, with their x: where the axis can put labels. */
  stops: Array<{ t: number; x: number }>;
  breaks: TimeBreak[];
}

/** Width every gap gets, however short, so moments a millisecond apart are still apart. */
const BASE = 1;
/** A gap of 100 ms adds about 0.3 of BASE, 1 s one BASE, 1 min 2.8, 1 h 4.6. */
const LOG_UNIT_MS = 100;
/** Gaps at least this long are drawn as a break, with their length. */
export const BREAK_MS = 60_000;
/** With a single moment (an empty journal), the axis shows the minute before it. */
const LONE_SPAN_MS = 60_000;

export function timeScale(moments: readonly number[], left: number, right: number): TimeScale {
  const keys = [...new Set(moments.filter(Number.isFinite))].sort((a, b) => a - b);
  if (keys.length === 0) keys.push(0);
  // A lone moment gets the minute before it; that made-up stretch is no break.
  const lone = keys.length === 1;
  if (lone) keys.unshift(keys[0]! - LONE_SPAN_MS);
  const weights = keys.slice(1).map((t, i) => BASE + Math.log10(1 + (t - keys[i]!) / LOG_UNIT_MS));
  const total = weights.reduce((a, b) => a + b, 0);
  const xs = [left];
  for (const w of weights) xs.push(xs.at(-1)! + ((right - left) * w) / total);
  xs[xs.length - 1] = right; // exactly, whatever the sum's rounding

  const x = (t: number): number => {
    if (t <= keys[0]!) return left;
    if (t >= keys.at(-1)!) return right;
    // Binary search for the gap holding t, then linear within it.
    let lo = 0;
    let hi = keys.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! <= t) lo = mid;
      else hi = mid;
    }
    const t0 = keys[lo]!;
    const t1 = keys[hi]!;
    return xs[lo]! + ((xs[hi]! - xs[lo]!) * (t - t0)) / (t1 - t0);
  };

  const breaks: TimeBreak[] = [];
  for (let i = 1; i < keys.length && !lone; i++) {
    const gap = keys[i]! - keys[i - 1]!;
    if (gap >= BREAK_MS) breaks.push({ x1: xs[i - 1]!, x2: xs[i]!, ms: gap });
  }
  return { start: keys[0]!, end: keys.at(-1)!, x, stops: keys.map((t, i) => ({ t, x: xs[i]! })), breaks };
}

/** A gap's length as the axis says it: "45s", "61m" (minutes up to two hours, as clocks are moved), "2h5m", "3d". */
export function spanText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  return `${Math.round(h / 24)}d`;
}
