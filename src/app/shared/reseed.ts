import type { Reseed } from "../../core/state-store.js";
import type { Journal } from "../../control/journal.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { sessionPart } from "./part-names.js";
import { type KeyJson, partNames, writePart } from "./parts.js";

/**
 * The whole shared state as this replica holds it, for a store that lost its data: every part
 * (each carries the keys it names), the journal with its numbers, and the live sessions' last
 * uses. What survives an empty Redis restart is what a running replica holds (docs/deployment.md).
 */
export function snapshot(
  { ctx, sessions, journal, keyJson }: { ctx: SandboxContext; sessions: SessionStore; journal: Journal; keyJson: KeyJson },
  from: Pick<Reseed, "lineage" | "fromEpoch" | "position" | "ancestry">,
): Reseed {
  const parts: Array<{ name: string; json: string }> = [];
  for (const name of partNames(ctx)) {
    const json = writePart(ctx, name, keyJson);
    if (json !== undefined) parts.push({ name, json });
  }
  return {
    ...from,
    parts,
    keys: [],
    journal: journal.stored().map(({ seq, record }) => ({ seq, json: JSON.stringify(record) })),
    journalSeq: journal.nextSeq - 1,
    live: sessions.list().map((s) => ({ part: sessionPart(s.id), atMs: s.lastUsedAt })),
  };
}
