import type { TimelineProps } from "./props";

/** Placeholder until the panel is built (issue 14). */
export function Timeline(_props: TimelineProps) {
  return <section aria-label="Timeline" />;
}
