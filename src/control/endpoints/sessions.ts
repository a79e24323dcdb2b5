import { jsonResponse, type RequestTrace } from "../../core/context.js";
import type { ControlContext, ControlEndpoint } from "../context.js";
import { InvalidRequest, NotFound } from "../../core/errors.js";
import { headerValue, type SandboxRequest, type SandboxResponse } from "../../core/http-types.js";
import { echo } from "../../core/echo.js";
import { ScenarioLoadError } from "../../scenarios/problems.js";
import { controlBody, onlyFields } from "../body.js";
import { applyClockChange, clockView, publishClock } from "../clock-ops.js";
import { echoValue } from "../session-history.js";
import { analyze } from "../report.js";
import { sessionActionsEndpoint } from "./session-actions.js";

/** POST /__sandbox/sessions `{scenario?}` → 201 with fresh credentials; GET lists the sessions. */
export const sessionsEndpoint: ControlEndpoint = async (request, ctx, trace) => {
  if (request.method === "GET") {
    return jsonResponse(200, {
      sessions: ctx.sessions.list().map((s) => {
        const { id, scenario, base_url, expires_at } = ctx.sessions.info(s, headerValue(request, "host"));
        return { id, scenario, base_url, expires_at };
      }),
    });
  }
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

/** One session: GET/DELETE, and its clock, reset, report and actions. */
export async function sessionEndpoint(
  request: SandboxRequest,
  ctx: ControlContext,
  trace: RequestTrace,
  params: string[],
  sub: "" | "clock" | "reset" | "report" | "actions",
): Promise<SandboxResponse> {
  const id = params[0]!;
  const session = ctx.sessions.get(id);
  if (!session) throw unknownSession(id);
  const where = `/__sandbox/sessions/${id}${sub ? `/${sub}` : ""}`;
  switch (sub) {
    case "":
      if (request.method === "DELETE") {
        ctx.sessions.delete(id);
        return { status: 204, headers: { "cache-control": "no-store" }, body: "" };
      }
      return jsonResponse(200, {
        ...ctx.sessions.info(session, headerValue(request, "host")),
        state: session.instance.state,
        clock: clockView(session.instance.clock),
        history: session.history.entries,
        history_dropped: session.history.dropped,
      });
    case "clock":
      if (request.method === "GET") return jsonResponse(200, clockView(session.instance.clock));
      {
        const body = controlBody(request, trace.body, `POST ${where}`, '{"advance": "61m"}');
        const before = session.instance.clock.now();
        const view = applyClockChange(session.instance.clock, body, `POST ${where}`);
        publishClock(ctx.events, ctx.journal.lastId(), view, id);
        // Checked by applyClockChange: only these three, of these types.
        const secrets = ctx.merchants.secrets.view();
        const change: Record<string, unknown> = {};
        for (const key of ["advance", "set", "freeze"] as const) if (body[key] !== undefined) change[key] = echoValue(body[key], secrets);
        ctx.sessions.remember(session, ctx.journal.lastId(), before, { kind: "clock", change });
        return jsonResponse(200, view);
      }
    case "reset": {
      const before = session.instance.clock.now();
      ctx.sessions.reset(session);
      ctx.sessions.remember(session, ctx.journal.lastId(), before, { kind: "reset" });
      return jsonResponse(200, { reset: true, session: id, clock: clockView(session.instance.clock) });
    }
    case "report":
      return jsonResponse(200, { session: id, findings: analyze(ctx.journal.list({ session: id })) });
    case "actions":
      return sessionActionsEndpoint(request, ctx, trace, session, where, () => unknownSession(id));
  }
}

/** The refusal of a session that does not exist, or no longer: also for one that ended while its request ran. */
function unknownSession(id: string): NotFound {
  // Echoed through the problem mapper's redaction (core/echo.ts): a secret planted as the id is never shown.
  return new NotFound(
    `There is no session '${echo(id, 64)}': it was deleted, reaped after being idle, or never created. Create one with POST /__sandbox/sessions.`,
  );
}
