import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { type KeyJson, PART_KINDS, type PartKind } from "./part-kinds.js";

export type { KeyJson } from "./part-kinds.js";

/**
 * How the live objects are written into the parts of the shared state and read back from them,
 * for every kind of part alike (part-kinds.ts says what each holds, part-names.ts how each is
 * named): the stored layout's version, and the keys a part names carried with it.
 */

/** Stored layout of the parts' JSON; a replica refuses a part of another. */
const PART_VERSION = 1;

function kindOf(name: string): PartKind {
  const kind = PART_KINDS.find((k) => k.owns(name));
  if (!kind) throw new Error(`no kind of shared part is named like '${name}': register its kind in PART_KINDS (part-kinds.ts)`);
  return kind;
}

/** Where the kind of the part comes among the kinds, the order a sync reads parts in. */
export function partRank(name: string): number {
  return PART_KINDS.indexOf(kindOf(name));
}

/**
 * The part's JSON as the live objects are now; undefined when it is gone (an ended session). A
 * part carries the keys its state names, so a replica that reads it never lacks one, however long
 * ago the key was made.
 */
export function writePart(ctx: SandboxContext, name: string, keyJson: KeyJson): string | undefined {
  const written = kindOf(name).write(ctx, name);
  if (!written) return undefined;
  const keys = written.kids && keysOf(written.kids, keyJson);
  return JSON.stringify({ v: PART_VERSION, ...(written.data as object), ...(keys && { keys }) });
}

/** Each kid once, in the order first named, with its key. */
function keysOf(kids: readonly string[], keyJson: KeyJson): string[] {
  const keys: string[] = [];
  for (const kid of new Set(kids)) {
    const json = keyJson(kid);
    if (json !== undefined) keys.push(json);
  }
  return keys;
}

/** The names of every part the live objects make now. */
export function partNames(ctx: SandboxContext): string[] {
  return PART_KINDS.flatMap((kind) => kind.names(ctx));
}

/** Brings the live objects to a stored part (another replica's change). */
export async function readPart(ctx: SandboxContext, sessions: SessionStore, name: string, json: string): Promise<void> {
  let data: { v?: number; keys?: string[] };
  try {
    data = JSON.parse(json) as typeof data;
  } catch {
    // Never the parser's message: it quotes the text, which holds merchants' secrets.
    throw new Error(`the stored part '${name}' is not JSON`);
  }
  if (data.v !== PART_VERSION) throw new Error(`the stored part '${name}' is of layout ${String(data.v)}; this replica reads layout ${PART_VERSION}`);
  if (data.keys !== undefined && data.keys.length > 0) await ctx.ring.absorbKeys(data.keys);
  await kindOf(name).read(ctx, sessions, name, data);
}

/** A part is gone from the store (an ended session's): what the live objects hold of it goes too. */
export function dropPart(sessions: SessionStore, name: string): void {
  kindOf(name).drop(sessions, name);
}
