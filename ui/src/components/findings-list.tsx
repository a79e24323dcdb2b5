import { Fragment } from "preact";
import type { Finding } from "../types";
import { showRow } from "./row-focus";

/** What the report says the client did wrong, each finding linked to the rows that show it. */
export function FindingsList({ findings }: { findings: Finding[] | undefined }) {
  return (
    <section class="card findings" aria-labelledby="findings-h">
      <h2 id="findings-h">Findings</h2>
      {findings === undefined ? (
        <p class="muted">Loading findings…</p>
      ) : findings.length === 0 ? (
        <p class="muted">No findings yet</p>
      ) : (
        <ul>
          {findings.map((f, i) => (
            <li key={`${i}-${f.code}`} class={`finding sev-${f.severity}`}>
              <span class={`tag tag-${f.severity}`}>{f.severity}</span> <code>{f.code}</code>
              <p>{f.message}</p>
              {f.evidence.length > 0 && (
                <p class="evidence">
                  Evidence:{" "}
                  {f.evidence.map((id, i) => (
                    <Fragment key={id}>
                      {i > 0 && ", "}
                      <a
                        href={`#row-${id}`}
                        onClick={(ev) => {
                          // The hash holds the route: move to the row by hand instead.
                          ev.preventDefault();
                          showRow(id);
                        }}
                      >
                        {id}
                      </a>
                    </Fragment>
                  ))}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
