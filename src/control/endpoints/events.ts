import { InvalidRequest, NotFound } from "../../core/errors.js";
import { headerValue } from "../../core/http-types.js";
import { redactValue } from "../../core/redact.js";
import type { ControlEndpoint } from "../context.js";
import { eventFrame } from "../events.js";
import { analyze } from "../report.js";

/**
 * GET /__sandbox/events[?session=&since=]: Server-Sent Events of the journal (request), a watched
 * session's findings when they change, clock moves and session changes. Last-Event-ID (or `since`)
 * replays the journal's requests after that id first, then the stream goes live.
 */
export const eventsEndpoint: ControlEndpoint = (request, ctx) => {
  const q = new URLSearchParams(request.query);
  const secrets = ctx.merchants.secrets.view();
  for (const key of q.keys()) {
    if (!["session", "since"].includes(key)) {
      throw new InvalidRequest(
        "unknown_parameter",
        `GET /__sandbox/events does not take '${redactValue(key, secrets).slice(0, 40)}'; it takes session and since (a request id such as req_12).`,
      );
    }
  }
  const session = q.get("session") ?? undefined;
  if (session !== undefined && !ctx.sessions.get(session)) {
    throw new NotFound(
      `There is no session '${redactValue(session, secrets).slice(0, 64)}': it was deleted, reaped after being idle, or never created. Create one with POST /__sandbox/sessions.`,
    );
  }
  const since = q.get("since") ?? headerValue(request, "last-event-id") ?? undefined;
  if (since !== undefined && since !== "" && !/^req_\d+$/.test(since)) {
    throw new InvalidRequest("since_invalid", `since (or Last-Event-ID) must be a request id such as req_12, as the events' ids are.`);
  }
  // At most one page more than the hub sends: it then knows to end the page with `overflow`.
  const replay = since
    ? ctx.journal.list({ ...(session !== undefined && { session }), since, limit: ctx.events.replayLimit }).map((e) => eventFrame("request", e.id, e))
    : [];
  const stream = ctx.events.subscribe(session, replay);
  if (session !== undefined) ctx.events.baseline(session, analyze(ctx.journal.list({ session })));
  return {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
    body: "",
    stream,
  };
};
