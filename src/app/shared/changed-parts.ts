import type { PartWrite } from "../../core/state-store.js";
import type { SandboxContext } from "../context.js";
import type { Attempt } from "./attempt.js";
import { type KeyJson, partNames, writePart } from "./parts.js";
import type { StoredParts } from "./stored-parts.js";

/**
 * What a run's commit writes and depends on: each part it may have changed (its scope's and the
 * ledger, or every part for a control-plane write) is written when its JSON now differs from the
 * stored one, and read (the commit holds only if it is still at the version the run found) when
 * written, when another replica's change reached it meanwhile, or when it is the run's scenario's
 * part, whose state the run's answer was made from.
 */
export function changedParts(
  run: Attempt,
  ctx: SandboxContext,
  parts: StoredParts,
  keyJson: KeyJson,
): { read: Record<string, number>; writes: PartWrite[] } {
  const read: Record<string, number> = {};
  const writes: PartWrite[] = [];
  if (!run.read) return { read, writes };
  const names = new Set(run.read.keys());
  if (run.allParts) for (const name of partNames(ctx)) names.add(name);
  for (const name of names) {
    const json = writePart(ctx, name, keyJson);
    const found = run.read.get(name) ?? 0;
    if (json !== parts.json(name)) {
      read[name] = found;
      writes.push({ name, json });
    } else if (parts.version(name) !== found || name === run.scope) {
      // Unchanged now, yet the run read it: another replica's change, applied here while the
      // run was under way, may have overwritten what the run did, or the answer was made from
      // it (it then holds only if nobody changed the part since the run found it).
      read[name] = found;
    }
  }
  return { read, writes };
}
