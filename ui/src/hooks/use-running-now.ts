import { useEffect, useMemo, useState } from "preact/hooks";
import { clockAt } from "../running-clock";
import type { ClockView } from "../types";

/**
 * The session clock now, re-rendered each second while it runs (the clock panel's reading, the
 * timeline's right edge); a frozen clock stays put and costs no timer.
 */
export function useRunningNow(clock: ClockView): string;
export function useRunningNow(clock: ClockView | undefined): string | undefined;
export function useRunningNow(clock: ClockView | undefined): string | undefined {
  const readAt = useMemo(() => (clock ? Date.now() : 0), [clock]);
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!clock || clock.frozen) return;
    const timer = setInterval(() => setTick((t) => t + 1), 1000);
    return () => clearInterval(timer);
  }, [clock]);
  return clock && clockAt(clock, readAt, Date.now());
}
