import { jsonResponse } from "../../core/context.js";
import type { ControlEndpoint } from "../context.js";
import { controlBody } from "../body.js";
import { applyClockChange, clockView, publishClock } from "../clock-ops.js";

/** GET /__sandbox/clock: the sandbox clock, which every scenario and session clock follows. */
export const showClock: ControlEndpoint = (_request, ctx) => jsonResponse(200, clockView(ctx.clock));

/** POST /__sandbox/clock `{advance | set | freeze}`: moves or freezes the sandbox clock, and every clock that follows it. */
export const moveClock: ControlEndpoint = (request, ctx, trace) => {
  const body = controlBody(request, trace.body, "POST /__sandbox/clock", '{"advance": "59m"}');
  const view = applyClockChange(ctx.clock, body, "POST /__sandbox/clock");
  publishClock(ctx.events, ctx.journal.lastId(), view);
  return jsonResponse(200, view);
};

/** POST /__sandbox/reset: the whole sandbox as it started (scenarios, sessions, tokens, journal, clock). */
export const resetEndpoint: ControlEndpoint = (_request, ctx) => {
  ctx.resetAll();
  return jsonResponse(200, { reset: true, scenarios: ctx.scenarios.loaded.map((s) => s.name), clock: clockView(ctx.clock) });
};
