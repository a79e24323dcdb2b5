import type { SessionPanelProps } from "./props";

/** Placeholder until the panel is built (issue 14). */
export function BreakItNow(_props: SessionPanelProps) {
  return <section aria-label="BreakItNow" />;
}
