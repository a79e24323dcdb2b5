import type { ClockPanelProps } from "./props";

/** Placeholder until the panel is built (issue 14). */
export function ClockPanel(_props: ClockPanelProps) {
  return <section aria-label="ClockPanel" />;
}
