import type { StateChanges } from "../../core/state-store.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { sessionOfPart } from "./part-names.js";
import { dropPart, partRank, readPart } from "./parts.js";

/**
 * Each part as this replica last synced or committed it (its version and JSON), and the two ways
 * the replica's objects are brought to the store's: a sync's changes applied, and a failed run's
 * changes undone (its parts read back as stored).
 */
export class StoredParts {
  private readonly parts = new Map<string, { version: number; json: string }>();

  constructor(
    private readonly ctx: SandboxContext,
    private readonly sessions: SessionStore,
  ) {}

  version(name: string): number {
    return this.parts.get(name)?.version ?? 0;
  }

  json(name: string): string | undefined {
    return this.parts.get(name)?.json;
  }

  has(name: string): boolean {
    return this.parts.has(name);
  }

  /** Every part but those named is gone from the store (a reset's commit removed them). */
  keepOnly(names: ReadonlySet<string>): void {
    for (const name of [...this.parts.keys()]) if (!names.has(name)) this.parts.delete(name);
  }

  /** The stored parts that are sessions'. */
  *sessionNames(): Iterable<string> {
    for (const name of this.parts.keys()) if (sessionOfPart(name) !== undefined) yield name;
  }

  /** A part this replica committed (undefined: removed). */
  committed(name: string, version: number, json: string | undefined): void {
    // A sync may have brought a later version meanwhile (the commit was being settled): it stays.
    if (this.version(name) >= version) return;
    if (json === undefined) this.parts.delete(name);
    else this.parts.set(name, { version, json });
  }

  /** The store was written whole from this replica's parts (a reseed): each at version 1. */
  reseeded(parts: ReadonlyArray<{ name: string; json: string }>): void {
    this.parts.clear();
    for (const part of parts) this.parts.set(part.name, { version: 1, json: part.json });
  }

  /** Applies a sync's changes: keys and records first, then the sandbox's part, the ledger, the sessions. */
  async apply(changes: Pick<StateChanges, "full" | "parts" | "removed" | "records" | "keys">): Promise<void> {
    if (changes.keys.length > 0) await this.ctx.ring.absorbKeys(changes.keys);
    if (changes.records.length > 0) this.ctx.ledger.absorbRecords(changes.records, this.ctx.clock.nowSeconds());
    const ordered = [...changes.parts].sort((a, b) => partRank(a.name) - partRank(b.name));
    for (const part of ordered) {
      if (this.version(part.name) >= part.version && !changes.full) continue;
      await readPart(this.ctx, this.sessions, part.name, part.json);
      this.parts.set(part.name, { version: part.version, json: part.json });
    }
    const gone = new Set(changes.removed);
    if (changes.full) {
      const kept = new Set(changes.parts.map((p) => p.name));
      for (const name of this.parts.keys()) if (!kept.has(name)) gone.add(name);
    }
    for (const name of gone) {
      dropPart(this.sessions, name);
      this.parts.delete(name);
    }
  }

  /** The named parts back to how they are stored (a run whose commit failed changed them). */
  async restore(names: readonly string[]): Promise<void> {
    for (const name of names) {
      const stored = this.parts.get(name);
      if (stored) await readPart(this.ctx, this.sessions, name, stored.json);
      else dropPart(this.sessions, name);
    }
  }

  /** Sessions the store ended (reaped): their parts are gone. */
  forget(name: string): void {
    this.parts.delete(name);
  }
}
