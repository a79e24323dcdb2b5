import { useCallback, useEffect, useState } from "preact/hooks";
import type { Page } from "../page";
import { sessionHref } from "../route";
import type { SessionListItem } from "../types";

/** The sandbox's open sessions: open one, reset it, end it. */
export function SessionsSection({ page }: { page: Page }) {
  const [sessions, setSessions] = useState<SessionListItem[] | undefined>();

  const load = useCallback(
    async (say?: boolean) => {
      try {
        const { sessions } = await page.api.sessions();
        setSessions(sessions);
        if (say) page.announce(`${sessions.length} session${sessions.length === 1 ? "" : "s"} open`);
      } catch (e) {
        page.fail(e);
      }
    },
    [page],
  );
  useEffect(() => void load(), [load]);

  const act = async (id: string, what: "reset" | "end") => {
    try {
      if (what === "reset") await page.api.resetSession(id);
      else await page.api.endSession(id);
      page.announce(`Session ${id} ${what === "reset" ? "reset" : "ended"}`);
      await load();
    } catch (e) {
      page.fail(e);
    }
  };

  return (
    <section class="card" aria-labelledby="sessions-h">
      <div class="card-head">
        <h2 id="sessions-h">Sessions</h2>
        <button type="button" onClick={() => load(true)}>
          Refresh sessions
        </button>
      </div>
      {sessions !== undefined && sessions.length === 0 && <p class="muted">No sessions yet: create one from a scenario.</p>}
      <div class="table-box">
        <table class="sessions">
          <caption class="vh">Sessions</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Scenario</th>
              <th scope="col">base_url</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="vh">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions?.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={sessionHref(s.id)}>{s.id}</a>
                </td>
                <td>{s.scenario}</td>
                {/* Takes the width the other columns leave, cut with an ellipsis; the session's page shows it whole with a copy button. */}
                <td class="mono base-url" title={s.base_url}>
                  {s.base_url}
                </td>
                <td class="nowrap">
                  {/* The time of day: the idle limit is minutes, not days; the whole date is its title. */}
                  <time dateTime={s.expires_at} title={s.expires_at.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC")}>
                    {s.expires_at.slice(11, 19)} UTC
                  </time>
                </td>
                <td class="nowrap">
                  <button type="button" onClick={() => act(s.id, "reset")}>
                    Reset<span class="vh"> {s.id}</span>
                  </button>{" "}
                  <button type="button" class="danger" onClick={() => act(s.id, "end")}>
                    End<span class="vh"> {s.id}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
