import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ControlError } from "../api";
import { followSession, type StreamEvent } from "../events";
import { clockMark, mergeEntries, mergeHistoryMarks, replayFrom } from "../feed-state";
import type { TimelineMark } from "../panels/props";
import type { Page } from "../page";
import { clockAt } from "../running-clock";
import type { ClockView, Finding, HistoryEntry, JournalEntry, SessionChange, SessionDetail } from "../types";

export type LiveState = "live" | "reconnecting" | "stopped";

export interface SessionFeed {
  detail: SessionDetail | undefined;
  /** Why the session could not be loaded (it does not exist, or the call was refused). */
  missing: string | undefined;
  entries: readonly JournalEntry[];
  findings: Finding[] | undefined;
  clock: ClockView | undefined;
  marks: readonly TimelineMark[];
  live: LiveState;
  ended: boolean;
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
 * between the load and the stream is missed; rows that arrive twice are merged by id.
 */
export function useSessionFeed(page: Page, id: string): SessionFeed {
  const [detail, setDetail] = useState<SessionDetail>();
  const [missing, setMissing] = useState<string>();
  const [entries, setEntries] = useState<readonly JournalEntry[]>([]);
  const [findings, setFindings] = useState<Finding[]>();
  const [clock, setClockState] = useState<ClockView>();
  const [marks, setMarks] = useState<readonly TimelineMark[]>([]);
  const [live, setLive] = useState<LiveState>("stopped");
  const [ended, setEnded] = useState(false);
  // The clock as the last event (or load) told it: marks are measured from it, not from what a
  // panel set a moment before, which would make every move look like no move.
  // A running clock's reading is carried forward to now before comparing, or the time between two
  // readings would look like a move.
  const eventClock = useRef<{ view: ClockView; at: number } | undefined>(undefined);
  const stream = useRef<{ stop: () => void } | undefined>(undefined);

  const setClock = useCallback((view: ClockView) => setClockState(view), []);
  const endedRef = useRef(false);
  const endingHere = useCallback((on: boolean) => {
    endedRef.current = on;
  }, []);
  const markEnded = useCallback(() => {
    endedRef.current = true;
    setEnded(true);
    stream.current?.stop();
  }, []);

  useEffect(() => {
    let gone = false;
    // `mark`: only for the sandbox clock's moves. The session's own moves, actions and resets are
    // marked from its history (read with the session, then each `history` event), which also holds
    // those made before the page was opened or while its stream was down.
    const takeClock = (view: ClockView, mark: boolean) => {
      const last = eventClock.current;
      const before = last && { ...last.view, now: clockAt(last.view, last.at, Date.now()) };
      const moved = mark ? clockMark(before, view) : undefined;
      eventClock.current = { view, at: Date.now() };
      if (moved) setMarks((m) => [...m, moved]);
      setClock(view);
    };
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
        .then(
          (s) => {
            if (!gone) setDetail(s);
          },
          () => {},
        )
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
          setEntries((rows) => mergeEntries(rows, [entry]));
          // A rule that fired may have changed the credentials (rotate_secret: secret-rotated): read them again.
          if (entry.rules?.length) rereadDetail();
          break;
        }
        case "findings":
          setFindings((event.data as { findings: Finding[] }).findings);
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
          setMarks((m) => mergeHistoryMarks(m, [event.data as HistoryEntry]));
          break;
        case "session": {
          const change = event.data as SessionChange;
          if (change.change === "ended") {
            // Ended elsewhere (a script, another tab, idle reaping): say so, the notice alone is not read out.
            if (!endedRef.current) page.announce(`Session ${id} has ended`);
            markEnded();
          } else if (change.change === "actions") {
            // A rotated secret (from this page or a script) changes the credentials shown: read them again.
            if (change.applied?.includes("rotate_secret")) page.api.session(id).then((s) => !gone && setDetail(s), page.fail);
          } else if (change.change === "reset") {
            // A reset puts the scenario's declared secret back: the credentials shown change too.
            page.api.session(id).then((s) => !gone && setDetail(s), page.fail);
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
        setDetail(session);
        eventClock.current = { view: session.clock, at: Date.now() };
        setClock(session.clock);
        // What was done to the session before the page opened: its clock moves, actions and resets.
        setMarks((m) => mergeHistoryMarks(m, session.history));
        const [journal, report] = await Promise.all([page.api.journal(id), page.api.report(id)]);
        if (gone) return;
        setEntries((rows) => mergeEntries(rows, journal.requests));
        setFindings(report.findings);
        since = replayFrom(journal.requests);
      } catch (e) {
        if (gone) return;
        setMissing(e instanceof Error ? e.message : String(e));
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
          setLive(state);
          // Live again, or for the first time: the stream replays missed requests, but findings and
          // clock moves made while it was not open (or between the first read and its opening) are
          // only current in the report and the clock, so read both again.
          if (state === "live") {
            page.api.report(id).then(
              (r) => !gone && setFindings(r.findings),
              () => {},
            );
            page.api.clock(id).then(
              (c) => !gone && takeClock(c, false),
              () => {},
            );
          }
          // 404: the session ended while the stream was down; 401: the token was forgotten or changed.
          if (state === "stopped" && status === 404) setEnded(true);
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
  }, [page, id, setClock, markEnded]);

  return { detail, missing, entries, findings, clock, marks, live, ended, setClock, markEnded, endingHere };
}
