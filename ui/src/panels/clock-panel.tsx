import { useState } from "preact/hooks";
import { useRunningNow } from "../hooks/use-running-now";
import type { ClockView } from "../types";
import type { ClockPanelProps } from "./props";
import "./panel-form.css";
import "./clock-panel.css";

/** The presets the issue asks for: past a typical token lifetime (59 m, 1 h) in one press. */
const PRESETS = ["1m", "15m", "61m"] as const;

/**
 * The session's own clock (POST /__sandbox/sessions/{id}/clock): what time tokens are judged by,
 * moved by a preset or a typed duration, set, frozen. Each answer is handed to the page
 * (onClock), so the timeline and the journal follow; a refusal is said with its detail.
 */
export function ClockPanel({ api, session, clock, onClock, announce, fail }: ClockPanelProps) {
  const [advanceBy, setAdvanceBy] = useState("");
  const [setTo, setSetTo] = useState("");
  const shown = useRunningNow(clock);

  const change = async (body: { advance?: string; set?: string; freeze?: boolean }, says: (c: ClockView) => string) => {
    try {
      const answer = await api.changeClock(session.id, body);
      onClock(answer);
      announce(says(answer));
      return true;
    } catch (err) {
      fail(err);
      return false;
    }
  };
  const advance = (by: string) => change({ advance: by }, () => `Clock advanced by ${by}`);
  const submit = (e: Event, act: () => Promise<boolean>, clear: () => void) => {
    e.preventDefault();
    void act().then((ok) => ok && clear());
  };

  return (
    <section class="card panel-form clock-panel" aria-labelledby="clock-h">
      <h2 id="clock-h">Clock</h2>
      <p class="clock-now">
        <span class="muted">Session time</span>{" "}
        <time class="pf-readout" data-testid="session-clock" dateTime={shown}>
          {shown}
        </time>{" "}
        <span class={`clock-state clock-${clock.frozen ? "frozen" : "running"}`}>{clock.frozen ? "frozen" : "running"}</span>
      </p>
      <div class="pf-actions">
        {PRESETS.map((by) => (
          <button key={by} type="button" onClick={() => void advance(by)}>
            {`+${by.slice(0, -1)} m`}
          </button>
        ))}
        <button
          type="button"
          onClick={() => void change({ freeze: !clock.frozen }, (c) => (c.frozen ? `Clock frozen at ${c.now}` : `Clock running from ${c.now}`))}
        >
          {clock.frozen ? "Unfreeze clock" : "Freeze clock"}
        </button>
      </div>
      <form
        class="pf-field"
        onSubmit={(e) =>
          submit(
            e,
            () => advance(advanceBy.trim()),
            () => setAdvanceBy(""),
          )
        }
      >
        <label for="clock-advance">Advance by</label>
        <input
          id="clock-advance"
          value={advanceBy}
          placeholder="90s, 2h, -5m"
          spellcheck={false}
          onInput={(e) => setAdvanceBy(e.currentTarget.value)}
        />
        <button type="submit">Advance</button>
      </form>
      <form
        class="pf-field"
        onSubmit={(e) =>
          submit(
            e,
            () => change({ set: setTo.trim() }, (c) => `Clock set to ${c.now}`),
            () => setSetTo(""),
          )
        }
      >
        <label for="clock-set">Set time</label>
        <input id="clock-set" value={setTo} placeholder="2026-01-01T00:00:00Z" spellcheck={false} onInput={(e) => setSetTo(e.currentTarget.value)} />
        <button type="submit">Set</button>
      </form>
    </section>
  );
}
