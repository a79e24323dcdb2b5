import { InvalidRequest } from "../../core/errors.js";
import { headerValue } from "../../core/http-types.js";
import { echo } from "../../core/echo.js";
import type { ControlContext, ControlEndpoint } from "../context.js";
import { eventFrame } from "../events.js";
import { analyze } from "../report.js";
import { historyAfter, type StreamPosition, streamPosition } from "../session-history.js";
import { unknownSession } from "./sessions.js";

/**
 * GET /__sandbox/events[?session=&since=]: Server-Sent Events of the journal (request), a watched
 * session's findings when they change, clock moves, session changes and sessions' history entries.
 * Last-Event-ID (or `since`) replays the journal's requests and the history entries after that id
 * first, in the order they happened, then the stream goes live.
 */
export const eventsEndpoint: ControlEndpoint = (request, ctx) => {
  const q = new URLSearchParams(request.query);
  for (const key of q.keys()) {
    if (!["session", "since"].includes(key)) {
      throw new InvalidRequest(
        "unknown_parameter",
        `GET /__sandbox/events does not take '${echo(key, 40)}'; it takes session and since (a request id such as req_12).`,
      );
    }
  }
  const session = q.get("session") ?? undefined;
  if (session !== undefined && !ctx.sessions.get(session)) throw unknownSession(session);
  const since = q.get("since") ?? headerValue(request, "last-event-id") ?? undefined;
  const from = since ? streamPosition(since) : undefined;
  if (since !== undefined && since !== "" && from === undefined) {
    throw new InvalidRequest(
      "since_invalid",
      `since (or Last-Event-ID) must be an event id such as req_12 (a request) or req_12.3 (a history entry), as the events' ids are.`,
    );
  }
  // An id past the journal's newest is from before the sandbox (or its shared state) started over:
  // everything kept is new to that page, so it gets all of it rather than nothing.
  const replay = from ? replayFrames(ctx, session, from[0] > ctx.journal.nextSeq - 1 ? [0, 0] : from) : [];
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

/**
 * The requests and history entries after `from`, in the order they happened, at most one page more
 * than the hub sends (it then knows to end the page with `overflow`). The journal's page is the
 * first `limit` requests after `from`; an entry sorts after every request it came after.
 */
function replayFrames(ctx: ControlContext, session: string | undefined, from: StreamPosition): string[] {
  const limit = ctx.events.replayLimit;
  const requests = ctx.journal.list({ ...(session !== undefined && { session }), since: `req_${from[0]}`, limit });
  const owners = session === undefined ? ctx.sessions.list() : [ctx.sessions.get(session)!];
  const entries = owners.flatMap((s) => historyAfter(s.history, from));
  if (entries.length === 0) return requests.map((e) => eventFrame("request", e.id, e));
  const events = [
    ...requests.map((e) => ({ at: [e.seq, 0] as StreamPosition, frame: () => eventFrame("request", e.id, e) })),
    ...entries.map((e) => ({ at: streamPosition(e.id)!, frame: () => eventFrame("history", e.id, e) })),
  ];
  events.sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1]);
  return events.slice(0, limit).map((e) => e.frame());
}
