import { useState } from "preact/hooks";
import { BREAK_ACTIONS, type BreakField, type BreakInputs, DEFAULT_INPUTS, DELAY_ENDPOINTS, ranMessage } from "./break-actions";
import type { BreakItNowProps } from "./props";
import "./panel-form.css";

/**
 * "Break it now": runs one action on this session (POST /__sandbox/sessions/{id}/actions), the
 * same operation a CI script has, to watch the app under test cope or not. The control plane
 * checks the body; its refusal is said in the status line word for word.
 */
export function BreakItNow({ api, session, announce, fail, onRan }: BreakItNowProps) {
  const [choice, setChoice] = useState(BREAK_ACTIONS[0]!.value);
  const [inputs, setInputs] = useState<BreakInputs>(DEFAULT_INPUTS);
  // "" is every merchant of the session, as the operation does with no merchant given.
  const [merchant, setMerchant] = useState("");
  const action = BREAK_ACTIONS.find((a) => a.value === choice) ?? BREAK_ACTIONS[0]!;
  const shows = (f: BreakField) => action.fields.includes(f);
  const set = (patch: Partial<BreakInputs>) => setInputs({ ...inputs, ...patch });
  const id = (name: string) => `break-${name}`;

  const run = async (e: Event) => {
    e.preventDefault();
    try {
      const answer = await api.runActions(session.id, { ...(merchant && { merchant }), ...action.body(inputs) });
      announce(ranMessage(action, inputs, session.id, merchant || undefined));
      onRan?.(answer);
    } catch (err) {
      fail(err);
    }
  };

  return (
    <section class="card panel-form" aria-labelledby="break-h">
      <h2 id="break-h">Break it now</h2>
      <form onSubmit={run}>
        <div class="pf-field">
          <label for={id("action")}>Action</label>
          <select id={id("action")} value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
            {BREAK_ACTIONS.map((a) => (
              <option key={a.value} value={a.value}>
                {a.label}
              </option>
            ))}
          </select>
        </div>
        {session.merchants.length > 1 && (
          <div class="pf-field">
            <label for={id("merchant")}>Merchant</label>
            <select id={id("merchant")} value={merchant} onChange={(e) => setMerchant(e.currentTarget.value)}>
              <option value="">All merchants of the session</option>
              {session.merchants.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>
              ))}
            </select>
          </div>
        )}
        {shows("times") && (
          <div class="pf-field">
            <label for={id("times")}>Times</label>
            <input
              id={id("times")}
              type="number"
              inputMode="numeric"
              min={1}
              max={1000}
              value={inputs.times}
              onInput={(e) => set({ times: e.currentTarget.value })}
            />
          </div>
        )}
        {shows("retryAfter") && (
          <div class="pf-field">
            <label for={id("retry")}>Retry-After seconds</label>
            <input
              id={id("retry")}
              type="number"
              inputMode="numeric"
              min={0}
              value={inputs.retryAfter}
              onInput={(e) => set({ retryAfter: e.currentTarget.value })}
            />
          </div>
        )}
        {shows("delay") && (
          <div class="pf-field">
            <label for={id("delay")}>Delay</label>
            <input
              id={id("delay")}
              value={inputs.delay}
              placeholder="5s, 1500ms"
              spellcheck={false}
              onInput={(e) => set({ delay: e.currentTarget.value })}
            />
          </div>
        )}
        {shows("endpoint") && (
          <div class="pf-field">
            <label for={id("endpoint")}>Endpoint</label>
            <select id={id("endpoint")} value={inputs.endpoint} onChange={(e) => set({ endpoint: e.currentTarget.value })}>
              {DELAY_ENDPOINTS.map((name) => (
                <option key={name} value={name}>
                  {name === "any" ? "any endpoint" : name}
                </option>
              ))}
            </select>
          </div>
        )}
        {shows("keepOldKey") && (
          <div class="pf-check">
            <input id={id("keep")} type="checkbox" checked={inputs.keepOldKey} onChange={(e) => set({ keepOldKey: e.currentTarget.checked })} />
            <label for={id("keep")}>Keep the old key (its tokens still verify)</label>
          </div>
        )}
        <div class="pf-actions">
          <button type="submit">Run now</button>
        </div>
      </form>
    </section>
  );
}
