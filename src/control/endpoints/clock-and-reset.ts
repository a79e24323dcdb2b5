import { jsonResponse } from "../../core/context.js";
import type { ControlEndpoint } from "../context.js";
import { controlBody } from "../body.js";
import { applyClockChange, clockView, publishClock } from "../clock-ops.js";

/** GET/POST /__sandbox/clock: the sandbox clock, which every scenario and session clock follows. */
export const clockEndpoint: ControlEndpoint = (request, ctx, trace) => {
  if (request.method === "GET") return jsonResponse(200, clockView(ctx.clock));
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
