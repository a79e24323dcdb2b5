import { useEffect, useState } from "preact/hooks";
import type { Page } from "../page";
import { sessionHref } from "../route";
import { matchesScenario } from "../scenario-filter";
import type { ScenarioSummary } from "../types";

/** The scenarios this sandbox can make sessions of, searchable, each with a button that makes one. */
export function ScenariosSection({ page }: { page: Page }) {
  const [scenarios, setScenarios] = useState<ScenarioSummary[] | undefined>();
  const [query, setQuery] = useState("");
  const [creating, setCreating] = useState<string | undefined>();

  useEffect(() => {
    // The sandbox that serves the page always has GET /__sandbox/scenarios (they ship together).
    page.api.scenarios().then((a) => setScenarios(a.scenarios), page.fail);
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
