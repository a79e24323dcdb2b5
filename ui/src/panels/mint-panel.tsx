import type { SessionPanelProps } from "./props";

/** Placeholder until the panel is built (issue 14). */
export function MintPanel(_props: SessionPanelProps) {
  return <section aria-label="MintPanel" />;
}
