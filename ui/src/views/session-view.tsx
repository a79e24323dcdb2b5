import { useEffect, useMemo, useRef } from "preact/hooks";
import { Credentials } from "../components/credentials";
import { FindingsList } from "../components/findings-list";
import { JournalTable } from "../components/journal-table";
import { LiveIndicator } from "../components/live-indicator";
import { showRow } from "../components/row-focus";
import { useRunningNow } from "../hooks/use-running-now";
import { useSessionFeed } from "../hooks/use-session-feed";
import type { Page } from "../page";
import { BreakItNow } from "../panels/break-it-now";
import { ClockPanel } from "../panels/clock-panel";
import { MintPanel } from "../panels/mint-panel";
import { Timeline } from "../panels/timeline";
import "./session.css";

/** `#/sessions/<id>`: the session's credentials, its live journal and findings, and the panels that act on it. */
export function SessionView({ id, page }: { id: string; page: Page }) {
  const feed = useSessionFeed(page, id);
  const now = useRunningNow(feed.clock);
  const heading = useRef<HTMLHeadingElement>(null);
  // A new view: focus its heading, so keyboard and screen-reader users start at the top of it.
  useEffect(() => heading.current?.focus(), []);

  const { detail, ended } = feed;
  // The same element while the rows are the same: Preact then skips the table when the running clock
  // re-renders the page each second (preact/compat's memo would cost 3 KB for this one use).
  const journal = useMemo(() => <JournalTable entries={feed.entries} />, [feed.entries]);
  const act = async (what: "reset" | "end") => {
    try {
      if (what === "reset") {
        const answer = await page.api.resetSession(id);
        feed.setClock(answer.clock);
        page.announce(`Session ${id} reset`);
      } else {
        feed.endingHere(true);
        await page.api.endSession(id);
        feed.markEnded();
        page.announce(`Session ${id} ended`);
      }
    } catch (e) {
      if (what === "end") feed.endingHere(false);
      page.fail(e);
    }
  };

  return (
    <div class="session">
      <div class="session-head">
        <h1 ref={heading} tabIndex={-1}>
          Session {id}
        </h1>
        {detail && <span class="tag scenario-name">{detail.scenario}</span>}
        {!feed.missing && <LiveIndicator state={feed.live} />}
        {detail && !ended && (
          <div class="session-actions">
            <button type="button" onClick={() => act("reset")}>
              Reset session
            </button>
            <button type="button" class="danger" onClick={() => act("end")}>
              End session
            </button>
          </div>
        )}
      </div>
      {(ended || feed.missing) && (
        <p class="notice">
          <span>{ended ? `Session ${id} has ended` : feed.missing}</span> <a href="#/">Back to sessions</a>
        </p>
      )}
      {detail && (
        <div class={`session-grid${ended ? " is-ended" : ""}`}>
          {!ended && (
            <div class="area-cred">
              <Credentials page={page} session={detail} />
            </div>
          )}
          <div class="area-main">
            <Timeline entries={feed.entries} marks={feed.marks} now={now ?? detail.clock.now} onSelect={showRow} />
            {journal}
            <FindingsList findings={feed.findings} />
          </div>
          {!ended && feed.clock && (
            <div class="area-tools">
              <ClockPanel api={page.api} session={detail} clock={feed.clock} onClock={feed.setClock} announce={page.announce} fail={page.fail} />
              <BreakItNow api={page.api} session={detail} announce={page.announce} fail={page.fail} />
              <MintPanel api={page.api} session={detail} announce={page.announce} fail={page.fail} />
            </div>
          )}
        </div>
      )}
    </div>
  );
}
