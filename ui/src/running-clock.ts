/**
 * A running session clock moves on between two readings of it: the page carries the last reading
 * forward by the time passed on this machine since it was read. Pure (the caller passes both times),
 * so the unit tests (test/unit/ui-running-clock.test.ts) can check it without a timer.
 */
import type { ClockView } from "./types.js";

/**
 * The session clock's time at `now` (ms since the epoch, on this machine), as read at `readAt`: a
 * frozen clock, or one whose time does not parse, is shown as it was read.
 */
export function clockAt(clock: ClockView, readAt: number, now: number): string {
  const at = Date.parse(clock.now);
  return clock.frozen || !Number.isFinite(at) ? clock.now : new Date(at + now - readAt).toISOString();
}
