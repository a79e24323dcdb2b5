import { jsonResponse } from "../../core/context.js";
import type { ControlContext, ControlEndpoint, ControlHandler } from "../context.js";
import { InvalidRequest, NotFound } from "../../core/errors.js";
import { headerValue } from "../../core/http-types.js";
import { echo } from "../../core/echo.js";
import { ScenarioLoadError } from "../../scenarios/problems.js";
import { controlBody, onlyFields } from "../body.js";
import { clockView } from "../clock-ops.js";
import type { Session } from "../sessions.js";

/** GET /__sandbox/sessions: the live sessions, each with its base URL and when it ends. */
export const listSessions: ControlEndpoint = (request, ctx) =>
  jsonResponse(200, {
    sessions: ctx.sessions.list().map((s) => {
      const { id, scenario, profile, base_url, expires_at } = ctx.sessions.info(s, headerValue(request, "host"));
      return { id, scenario, profile, base_url, expires_at };
    }),
  });

/** POST /__sandbox/sessions `{scenario?, profile?}` → 201 with fresh credentials. */
export const createSession: ControlEndpoint = async (request, ctx, trace) => {
  const body = controlBody(request, trace.body, "POST /__sandbox/sessions", '{"scenario": "token-endpoint-outage"}');
  onlyFields(body, ["scenario", "profile"], "POST /__sandbox/sessions");
  if (body.scenario !== undefined && typeof body.scenario !== "string") {
    throw new InvalidRequest("session_scenario_invalid", `"scenario" must be the name of a scenario, such as "default" or "token-endpoint-outage".`);
  }
  if (body.profile !== undefined && (typeof body.profile !== "string" || body.profile === "")) {
    throw new InvalidRequest(
      "session_profile_invalid",
      `"profile" must be the name of a response profile, such as "oauth", "lexik", "camel" or "envelope".`,
    );
  }
  let session: Awaited<ReturnType<typeof ctx.sessions.create>>;
  try {
    session = await ctx.sessions.create(body.scenario as string | undefined, body.profile as string | undefined);
  } catch (e) {
    if (e instanceof ScenarioLoadError) {
      throw new InvalidRequest("session_scenario_unknown", `${e.problems[0]!.message}.`);
    }
    // A profile that cannot be used (unknown name, or a scenario's profile file with problems).
    if (e instanceof Error && e.name === "ProfileLoadError") throw new InvalidRequest("session_profile_invalid", e.message);
    throw e;
  }
  // The Host the caller reached the sandbox by (checked by the control plane's host rules) makes the base_url.
  return jsonResponse(201, ctx.sessions.info(session, headerValue(request, "host")), { location: `/__sandbox/sessions/${session.id}` });
};

/** GET /__sandbox/sessions/{id}: the session, its state, its clock and its history of control-plane changes. */
export const showSession: ControlHandler = (request, ctx, _trace, [id]) => {
  const session = knownSession(ctx, id!);
  return jsonResponse(200, {
    ...ctx.sessions.info(session, headerValue(request, "host")),
    state: session.instance.state,
    clock: clockView(session.instance.clock),
    history: session.history.entries,
    history_dropped: session.history.dropped,
  });
};

/** DELETE /__sandbox/sessions/{id}: ends the session; its merchants, keys and base URL go with it. */
export const endSession: ControlHandler = (_request, ctx, _trace, [id]) => {
  knownSession(ctx, id!);
  ctx.sessions.delete(id!);
  return { status: 204, headers: { "cache-control": "no-store" }, body: "" };
};

/** The live session a route's `{id}` names; else the unknown-session refusal. */
export function knownSession(ctx: ControlContext, id: string): Session {
  const session = ctx.sessions.get(id);
  if (!session) throw unknownSession(id);
  return session;
}

/** The refusal of a session that does not exist, or no longer: also for one that ended while its request ran. */
export function unknownSession(id: string): NotFound {
  // Echoed through the problem mapper's redaction (core/echo.ts): a secret planted as the id is never shown.
  return new NotFound(
    `There is no session '${echo(id, 64)}': it was deleted, reaped after being idle, or never created. Create one with POST /__sandbox/sessions.`,
  );
}
