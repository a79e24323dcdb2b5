import type { LiveState } from "../feed-state";

const TEXT: Record<LiveState, string> = { live: "Live", reconnecting: "Reconnecting…", stopped: "Stopped" };

/** Whether rows still arrive by themselves: said in words, the dot only repeats it. */
export function LiveIndicator({ state }: { state: LiveState }) {
  return (
    <span class={`live live-${state}`}>
      <span class="dot" aria-hidden="true" />
      {TEXT[state]}
    </span>
  );
}
