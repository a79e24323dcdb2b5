import { jsonResponse } from "../../core/context.js";
import type { ControlEndpoint, ControlHandler } from "../context.js";
import { InvalidRequest } from "../../core/errors.js";
import { echo } from "../../core/echo.js";
import { JOURNAL_PAGE_MAX } from "../journal.js";
import { analyze } from "../report.js";
import { knownSession } from "./sessions.js";

/**
 * GET /__sandbox/requests?session=&merchant=&since=&limit= : the redacted request journal, oldest
 * first; at most JOURNAL_PAGE_MAX entries an answer whatever the journal's size, so one answer (and
 * what a client that never reads it holds) has a bound.
 */
export const requestsEndpoint: ControlEndpoint = (request, ctx) => {
  const q = new URLSearchParams(request.query);
  for (const key of q.keys()) {
    if (!["session", "merchant", "since", "limit"].includes(key)) {
      throw new InvalidRequest(
        "unknown_parameter",
        `GET /__sandbox/requests does not take '${echo(key, 40)}'; it takes session, merchant, since (a request id or ISO time) and limit.`,
      );
    }
  }
  const limitText = q.get("limit");
  const limit = limitText === null ? JOURNAL_PAGE_MAX : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > JOURNAL_PAGE_MAX) {
    throw new InvalidRequest(
      "limit_invalid",
      `limit must be a whole number from 1 to ${JOURNAL_PAGE_MAX} (the default); read a longer journal in pages with since=<the last id you got>.`,
    );
  }
  const since = q.get("since") ?? undefined;
  if (since !== undefined && !/^req_\d+$/.test(since) && Number.isNaN(Date.parse(since))) {
    throw new InvalidRequest("since_invalid", `since must be a request id such as req_12, or an ISO time such as 2026-01-01T00:00:00Z.`);
  }
  const entries = ctx.journal.list({
    ...(q.get("session") !== null && { session: q.get("session")! }),
    ...(q.get("merchant") !== null && { merchant: q.get("merchant")! }),
    ...(since !== undefined && { since }),
    limit,
  });
  return jsonResponse(200, { requests: entries, capacity: ctx.journal.capacity });
};

/** GET /__sandbox/report[?session=&merchant=]: the findings over the whole journal (or a part). */
export const reportEndpoint: ControlEndpoint = (request, ctx) => {
  const q = new URLSearchParams(request.query);
  for (const key of q.keys()) {
    if (!["session", "merchant"].includes(key)) {
      throw new InvalidRequest("unknown_parameter", `GET /__sandbox/report does not take '${echo(key, 40)}'; it takes session and merchant.`);
    }
  }
  const entries = ctx.journal.list({
    ...(q.get("session") !== null && { session: q.get("session")! }),
    ...(q.get("merchant") !== null && { merchant: q.get("merchant")! }),
  });
  return jsonResponse(200, { findings: analyze(entries) });
};

/** GET /__sandbox/sessions/{id}/report: the findings of the session's requests alone. */
export const reportOnSession: ControlHandler = (_request, ctx, _trace, [id]) => {
  knownSession(ctx, id!);
  return jsonResponse(200, { session: id, findings: analyze(ctx.journal.list({ session: id })) });
};
