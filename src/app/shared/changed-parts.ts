import type { PartWrite } from "../../core/state-store.js";
import type { SandboxContext } from "../context.js";
import type { Attempt } from "./attempt.js";
import { sessionPartNames } from "./part-names.js";
import { type KeyJson, writePart } from "./parts.js";
import type { StoredParts } from "./stored-parts.js";

/**
 * What a run's commit writes and depends on: each part it may have changed (its scope's, and any
 * session made or ended when sessions come and go) is written when its JSON now differs from the
 * stored one, and read (the commit holds only if it is still at the version the run found) when
 * written, when another replica's change reached it meanwhile, or when it is the part whose state
 * the run's answer was made from. Only these parts are serialized: the cost is the run's, not the
 * number of sessions'.
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
  if (run.sessionsComeAndGo) {
    // Sessions made by the run (not stored yet) and ended by it (stored, gone here); a reset ends
    // every session at once (the commit's clearParts), so those are not written one by one.
    const live = sessionPartNames(ctx);
    for (const name of live) if (!parts.has(name)) names.add(name);
    if (!run.clearStore) {
      const here = new Set(live);
      for (const name of parts.sessionNames()) if (!here.has(name)) names.add(name);
    }
  }
  for (const name of names) {
    const json = writePart(ctx, name, keyJson);
    const found = run.read.get(name) ?? 0;
    if (json !== parts.json(name)) {
      read[name] = found;
      writes.push({ name, json });
    } else if (parts.version(name) !== found || name === run.dependsOn) {
      // Unchanged now, yet the run read it: another replica's change, applied here while the
      // run was under way, may have overwritten what the run did, or the answer was made from
      // it (it then holds only if nobody changed the part since the run found it).
      read[name] = found;
    }
  }
  return { read, writes };
}
