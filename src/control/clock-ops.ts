import { ClockRangeError, type SandboxClock } from "../core/clock.js";
import { parseSignedDuration } from "../core/duration.js";
import { InvalidRequest } from "../core/errors.js";
import { onlyFields } from "./body.js";
import type { EventHub } from "./events.js";

/**
 * The clock operations of the control plane, on the sandbox clock or a session's:
 * `{advance: "59m"}` (or "-5m"), `{set: "2026-01-01T00:00:00Z"}`, `{freeze: true|false}`.
 * Several may be combined; they apply in that order: set, advance, freeze.
 */
export interface ClockView {
  now: string;
  frozen: boolean;
}

export function clockView(clock: SandboxClock): ClockView {
  return { now: new Date(clock.now()).toISOString(), frozen: clock.frozen };
}

export function applyClockChange(clock: SandboxClock, body: Record<string, unknown>, endpoint: string): ClockView {
  onlyFields(body, ["advance", "set", "freeze"], endpoint);
  if (Object.keys(body).length === 0) {
    throw new InvalidRequest("clock_change_missing", `${endpoint} needs {"advance": "59m"}, {"set": "2026-01-01T00:00:00Z"} or {"freeze": true}.`);
  }
  let setTo: number | undefined;
  if (body.set !== undefined) {
    setTo = typeof body.set === "string" ? Date.parse(body.set) : NaN;
    if (!Number.isFinite(setTo)) throw new InvalidRequest("clock_set_invalid", `"set" must be an ISO 8601 time such as "2026-01-01T00:00:00Z".`);
  }
  let advanceMs: number | undefined;
  if (body.advance !== undefined) {
    const v = body.advance;
    try {
      if (typeof v !== "string" && typeof v !== "number") throw new RangeError("type");
      advanceMs = parseSignedDuration(v);
    } catch {
      throw new InvalidRequest("clock_advance_invalid", `"advance" must be a duration such as "90s", "59m", "1h" or "-5m" (or a number of seconds).`);
    }
  }
  if (body.freeze !== undefined && typeof body.freeze !== "boolean") {
    throw new InvalidRequest("clock_freeze_invalid", `"freeze" must be true or false.`);
  }
  // Checked before anything moves: a refused change leaves the clock as it was. The clocks that
  // follow this one (scenarios' and sessions') move with it, and are checked too.
  const target = (setTo ?? clock.now()) + (advanceMs ?? 0);
  try {
    clock.assertCanMoveTo(target);
  } catch (e) {
    if (!(e instanceof ClockRangeError)) throw e;
    throw new InvalidRequest(
      "clock_out_of_range",
      `This change would set the clock outside the dates tokens can carry: ${e.message}. Advance or set it by less.`,
    );
  }
  if (setTo !== undefined) clock.set(setTo);
  if (advanceMs !== undefined) clock.advance(advanceMs);
  if (body.freeze === true) clock.freeze();
  if (body.freeze === false) clock.unfreeze();
  return clockView(clock);
}

/** Tells the event streams a clock moved: the sandbox clock (every stream) or a session's. */
export function publishClock(events: EventHub, lastId: string, view: ClockView, session?: string): void {
  if (events.active) events.publish("clock", lastId, session === undefined ? view : { session, ...view }, session);
}
