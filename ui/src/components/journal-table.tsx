import { useState } from "preact/hooks";
import { outcomeOf, sessionTime, statusText } from "../format";
import type { JournalEntry } from "../types";
import "./journal.css";

const COLUMNS = 8;

/**
 * The session's requests, oldest first. Refused (4xx) and failed (5xx, dropped) rows carry a class
 * and a word, so the difference is not in colour alone. Each row opens to its whole journal entry
 * (entries hold token ids and redacted queries, never a secret).
 */
export function JournalTable({ entries }: { entries: readonly JournalEntry[] }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  return (
    <section class="card journal" aria-labelledby="journal-h">
      <h2 id="journal-h">Request journal</h2>
      {entries.length === 0 && (
        <p class="muted">No requests yet: point the app under test at the base_url above; its calls appear here as they happen.</p>
      )}
      <div class="table-box">
        <table>
          <caption class="vh">Request journal</caption>
          <thead>
            <tr>
              <th scope="col">
                <span class="vh">Details</span>
              </th>
              <th scope="col">Session time</th>
              <th scope="col">Method</th>
              <th scope="col">Path</th>
              <th scope="col">Status</th>
              <th scope="col">Code</th>
              <th scope="col">Rule</th>
              <th scope="col">Token</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <Row key={e.id} entry={e} open={open.has(e.id)} onToggle={toggle} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Row({ entry: e, open, onToggle }: { entry: JournalEntry; open: boolean; onToggle: (id: string) => void }) {
  const outcome = outcomeOf(e);
  const token = e.tokenId ?? e.presentedTokenId;
  return (
    <>
      <tr id={`row-${e.id}`} data-outcome={outcome} class={`row-${outcome}`} tabIndex={-1}>
        <td class="nowrap">
          <button
            type="button"
            class="details-toggle"
            aria-expanded={open}
            aria-controls={open ? `details-${e.id}` : undefined}
            onClick={() => onToggle(e.id)}
          >
            {/* The chevron is drawn by CSS inside an aria-hidden span: generated text would join the button's name. */}
            <span class="chev" aria-hidden="true" />
            <span class="vh">Details </span>
            {e.id}
          </button>
          {/* A shape beside the id, so a refusal shows even when the Status column is scrolled out of a phone's view. */}
          {outcome !== "ok" && <span class="row-sign" aria-hidden="true" />}
        </td>
        <td class="mono nowrap">
          <time dateTime={e.sandboxTime}>{sessionTime(e.sandboxTime)}</time>
        </td>
        <td class="mono">{e.method}</td>
        {/* One line, cut with an ellipsis: the whole path (redacted, as the journal keeps it) is its title and in the row's details. */}
        <td class="mono path" title={e.query ? `${e.path}?${e.query}` : e.path}>
          {e.path}
          {e.query && <span class="muted">?{e.query}</span>}
        </td>
        <td class="nowrap">
          {statusText(e)}
          {outcome !== "ok" && <span class={`tag tag-${outcome}`}>{outcome}</span>}
        </td>
        <td class="mono wrap">{e.code ?? ""}</td>
        {/* One line too, in the width the other columns leave: a rule's `scenario/name` wrapped at every '-'. */}
        <td class="mono rule" title={e.rules?.join(", ")}>
          {e.rules?.join(", ") ?? ""}
        </td>
        <td class="mono token" title={token}>
          {/* tokenId is also set on a call that accepted a token; only an issuing call has the expiry. */}
          {e.tokenExpiresAt ? "new " : ""}
          {token ?? ""}
        </td>
      </tr>
      {open && (
        <tr id={`details-${e.id}`} class="details-row">
          <td colSpan={COLUMNS}>
            <dl>
              {Object.entries(e).map(([k, v]) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
                </div>
              ))}
            </dl>
          </td>
        </tr>
      )}
    </>
  );
}
