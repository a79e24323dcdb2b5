import { useCallback, useEffect, useReducer, useRef } from "preact/hooks";
import { ControlError } from "../api";
import { followSession, type StreamEvent } from "../events";
import { EMPTY_FEED, type FeedState, feedReducer, replayFrom } from "../feed-state";
import type { Page } from "../page";
import type { ClockView, Finding, HistoryEntry, JournalEntry, SessionChange, SessionDetail } from "../types";

export interface SessionFeed extends Omit<FeedState, "heard" | "endingHere" | "endedElsewhere"> {
  /** A panel changed the clock: show it at once, before its event arrives. */
  setClock: (clock: ClockView) => void;
  /** The session was ended from this page. */
  markEnded: () => void;
  /** This page is ending the session (true) or failed to (false): its own "ended" event then says nothing, the page does. */
  endingHere: (on: boolean) => void;
}

/**
 * A session's page data: loaded once (session, journal, findings), then kept current by its event
 * stream. The stream replays from the newest row loaded (or from the start), so no request made
 * between the load and the stream is missed; rows that arrive twice are merged by id. What the
 * loads and events change is folded by `feedReducer` (feed-state.ts); this hook makes the requests,
 * holds the stream and says what the user must hear.
 */
export function useSessionFeed(page: Page, id: string): SessionFeed {
  const [state, dispatch] = useReducer(feedReducer, EMPTY_FEED);
  const stream = useRef<{ stop: () => void } | undefined>(undefined);

  const setClock = useCallback((view: ClockView) => dispatch({ type: "clock shown", view }), []);
  const endingHere = useCallback((on: boolean) => dispatch({ type: "ending here", on }), []);
  const markEnded = useCallback(() => {
    dispatch({ type: "ended", say: false });
    stream.current?.stop();
  }, []);

  // Ended elsewhere (a script, another tab, idle reaping): say so, the notice alone is not read out.
  useEffect(() => {
    if (state.endedElsewhere) page.announce(`Session ${id} has ended`);
  }, [state.endedElsewhere, page, id]);

  useEffect(() => {
    let gone = false;
    // `mark`: only for the sandbox clock's moves. The session's own moves, actions and resets are
    // marked from its history (read with the session, then each `history` event), which also holds
    // those made before the page was opened or while its stream was down.
    const takeClock = (view: ClockView, mark: boolean) => dispatch({ type: "clock heard", view, at: Date.now(), mark });
    const takeDetail = (detail: SessionDetail) => !gone && dispatch({ type: "detail", detail });
    // At most one read of the session in flight, and one more after it when rules kept firing meanwhile.
    let reading: "idle" | "reading" | "again" = "idle";
    const rereadDetail = () => {
      if (reading !== "idle") {
        reading = "again";
        return;
      }
      reading = "reading";
      page.api
        .session(id)
        .then(takeDetail, () => {})
        .finally(() => {
          const more = reading === "again";
          reading = "idle";
          if (more && !gone) rereadDetail();
        });
    };
    const onEvent = (event: StreamEvent) => {
      if (gone) return;
      switch (event.event) {
        case "request": {
          const entry = event.data as JournalEntry;
          dispatch({ type: "requests", entries: [entry] });
          // A rule that fired may have changed the credentials (rotate_secret: secret-rotated): read them again.
          if (entry.rules?.length) rereadDetail();
          break;
        }
        case "findings":
          dispatch({ type: "findings", findings: (event.data as { findings: Finding[] }).findings });
          break;
        case "clock": {
          const data = event.data as ClockView & { session?: string };
          // The sandbox clock moved (no `session`): this session's clock follows it, at its own offset.
          if (data.session === undefined)
            page.api.clock(id).then(
              (view) => takeClock(view, true),
              () => {},
            );
          else takeClock({ now: data.now, frozen: data.frozen }, false);
          break;
        }
        case "history":
          dispatch({ type: "history", entries: [event.data as HistoryEntry] });
          break;
        case "session": {
          const change = event.data as SessionChange;
          if (change.change === "ended") {
            dispatch({ type: "ended", say: true });
            stream.current?.stop();
          } else if (change.change === "actions") {
            // A rotated secret (from this page or a script) changes the credentials shown: read them again.
            if (change.applied?.includes("rotate_secret")) page.api.session(id).then(takeDetail, page.fail);
          } else if (change.change === "reset") {
            // A reset puts the scenario's declared secret back: the credentials shown change too.
            page.api.session(id).then(takeDetail, page.fail);
            page.api.clock(id).then((view) => takeClock(view, false), page.fail);
          }
          break;
        }
      }
    };

    (async () => {
      let since: string;
      try {
        const session = await page.api.session(id);
        if (gone) return;
        // What was done to the session before the page opened: its clock moves, actions and resets.
        dispatch({ type: "loaded", session, at: Date.now() });
        const [journal, report] = await Promise.all([page.api.journal(id), page.api.report(id)]);
        if (gone) return;
        dispatch({ type: "requests", entries: journal.requests });
        dispatch({ type: "findings", findings: report.findings });
        since = replayFrom(journal.requests);
      } catch (e) {
        if (gone) return;
        dispatch({ type: "missing", why: e instanceof Error ? e.message : String(e) });
        if (e instanceof ControlError && e.status === 404) page.announce(e.message, "error");
        else page.fail(e);
        return;
      }
      stream.current = followSession({
        session: id,
        since,
        headers: () => page.api.headers(),
        onEvent,
        onState: (state, status) => {
          if (gone) return;
          dispatch({ type: "live", state });
          // Live again, or for the first time: the stream replays missed requests, but findings and
          // clock moves made while it was not open (or between the first read and its opening) are
          // only current in the report and the clock, so read both again.
          if (state === "live") {
            page.api.report(id).then(
              (r) => !gone && dispatch({ type: "findings", findings: r.findings }),
              () => {},
            );
            page.api.clock(id).then(
              (c) => !gone && takeClock(c, false),
              () => {},
            );
          }
          // 404: the session ended while the stream was down; 401: the token was forgotten or changed.
          if (state === "stopped" && status === 404) dispatch({ type: "ended", say: false });
          if (state === "stopped" && status === 401)
            page.fail(new ControlError(401, "admin_token_required", "The event stream needs the admin token."));
          if (state === "stopped" && (status === 400 || status === 403))
            page.announce(`The sandbox refused this page's event stream (${status}): reload the page to follow the session again.`, "error");
        },
      });
    })();
    return () => {
      gone = true;
      stream.current?.stop();
    };
  }, [page, id]);

  const { detail, missing, entries, findings, clock, marks, live, ended } = state;
  return { detail, missing, entries, findings, clock, marks, live, ended, setClock, markEnded, endingHere };
}
