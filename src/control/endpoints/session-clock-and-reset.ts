import { jsonResponse } from "../../core/context.js";
import type { ControlHandler } from "../context.js";
import { controlBody } from "../body.js";
import { applyClockChange, clockView, publishClock } from "../clock-ops.js";
import { echoValue } from "../session-history.js";
import { knownSession } from "./sessions.js";

/** GET /__sandbox/sessions/{id}/clock: the session's clock. */
export const showSessionClock: ControlHandler = (_request, ctx, _trace, [id]) => jsonResponse(200, clockView(knownSession(ctx, id!).instance.clock));

/** POST /__sandbox/sessions/{id}/clock `{advance | set | freeze}`: moves or freezes the session's clock, and remembers the move. */
export const moveSessionClock: ControlHandler = (request, ctx, trace, [id]) => {
  const session = knownSession(ctx, id!);
  const where = `POST /__sandbox/sessions/${id}/clock`;
  const body = controlBody(request, trace.body, where, '{"advance": "61m"}');
  const before = session.instance.clock.now();
  const view = applyClockChange(session.instance.clock, body, where);
  publishClock(ctx.events, ctx.journal.lastId(), view, id);
  // Checked by applyClockChange: only these three, of these types.
  const secrets = ctx.merchants.secrets.view();
  const change: Record<string, unknown> = {};
  for (const key of ["advance", "set", "freeze"] as const) if (body[key] !== undefined) change[key] = echoValue(body[key], secrets);
  ctx.sessions.remember(session, ctx.journal.lastId(), before, { kind: "clock", change });
  return jsonResponse(200, view);
};

/** POST /__sandbox/sessions/{id}/reset: the session as it was made (state, tokens, clock, pending rules). */
export const resetSession: ControlHandler = (_request, ctx, _trace, [id]) => {
  const session = knownSession(ctx, id!);
  const before = session.instance.clock.now();
  ctx.sessions.reset(session);
  ctx.sessions.remember(session, ctx.journal.lastId(), before, { kind: "reset" });
  return jsonResponse(200, { reset: true, session: id, clock: clockView(session.instance.clock) });
};
