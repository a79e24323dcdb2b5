/** The Scenarios search: pure, for the unit tests. */
import type { ScenarioSummary } from "./types.js";

/**
 * Whether a scenario matches what was typed: every word, in any order, anywhere in its name,
 * description or rules' summaries ("expire token" finds token-expires-after-calls).
 */
export function matchesScenario(s: ScenarioSummary, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = [s.name, s.description, ...s.rules.flatMap((r) => [r.name, r.summary])].join(" ").toLowerCase();
  return words.every((w) => text.includes(w));
}
