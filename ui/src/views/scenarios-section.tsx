import { useEffect, useState } from "preact/hooks";
import { ControlError } from "../api";
import type { Page } from "../page";
import { sessionHref } from "../route";
import { matchesScenario, namesOnly } from "../scenario-filter";
import type { ScenarioSummary } from "../types";

/** The scenarios this sandbox can make sessions of, searchable, each with a button that makes one. */
export function ScenariosSection({ page }: { page: Page }) {
  const [scenarios, setScenarios] = useState<ScenarioSummary[] | undefined>();
  // Set when only the names could be had (a sandbox without GET /__sandbox/scenarios).
  const [namesOnlyNote, setNamesOnlyNote] = useState(false);
  const [query, setQuery] = useState("");
  const [creating, setCreating] = useState<string | undefined>();

  useEffect(() => {
    page.api.scenarios().then(
      (a) => setScenarios(a.scenarios),
      async (e) => {
        if (!(e instanceof ControlError && e.status === 404)) return page.fail(e);
        try {
          setScenarios(namesOnly((await page.api.health()).scenarios));
          setNamesOnlyNote(true);
        } catch (e2) {
          page.fail(e2);
        }
      },
    );
  }, [page]);

  const create = async (name: string) => {
    setCreating(name);
    try {
      const session = await page.api.createSession(name);
      page.announce(`Session ${session.id} created`);
      location.hash = sessionHref(session.id);
    } catch (e) {
      page.fail(e);
      setCreating(undefined);
    }
  };

  const shown = scenarios?.filter((s) => matchesScenario(s, query));
  return (
    <section class="card" aria-labelledby="scenarios-h">
      <h2 id="scenarios-h">Scenarios</h2>
      <label class="search">
        <span>Search scenarios</span>
        <input type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder="token, outage, key…" />
      </label>
      {namesOnlyNote && (
        <p class="note">
          Descriptions unavailable: this sandbox has no scenario listing (GET /__sandbox/scenarios), so only the names of the scenarios it loaded are
          shown.
        </p>
      )}
      {shown === undefined ? (
        <p class="muted">Loading scenarios…</p>
      ) : shown.length === 0 ? (
        <p class="muted">No scenario matches “{query}”.</p>
      ) : (
        <ul class="scenario-list">
          {shown.map((s) => (
            <li key={s.name}>
              <article class="scenario">
                <h3>{s.name}</h3>
                {s.source === "loaded" && <span class="tag">loaded</span>}
                {s.description && <p>{s.description}</p>}
                {s.rules.length > 0 && (
                  <ul class="rules">
                    {s.rules.map((r) => (
                      <li key={r.name}>
                        <code>{r.name}</code> {r.summary}
                      </li>
                    ))}
                  </ul>
                )}
                <button type="button" disabled={creating !== undefined} onClick={() => create(s.name)}>
                  Create session<span class="vh"> from {s.name}</span>
                </button>
              </article>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
