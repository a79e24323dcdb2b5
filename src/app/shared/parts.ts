import type { Algorithm } from "../../core/config.js";
import type { Session, SessionRecord, SessionStore } from "../../control/sessions.js";
import { instanceState, restoreInstance } from "../../scenarios/instance-state.js";
import type { SandboxContext } from "../context.js";
import { LEDGER_PART, SANDBOX_PART, sessionOfPart, sessionPartNames } from "./part-names.js";

/**
 * How each part of a sandbox's shared state (part-names.ts) is written from and read into the
 * live objects: `sandbox` (the sandbox clock, the start keys, the loaded scenarios' state),
 * `ledger` (revocations and early expiries) and `s:<id>` (a session: how to make it, its
 * scenario's state, its history). A request that changes state writes only the parts it changed.
 */

/** Stored layout of the parts' JSON; a replica refuses a part of another. */
const PART_VERSION = 1;

/** A key as stored (secret: the store holds it, nothing prints it), by kid; undefined when the ring lacks it. */
export type KeyJson = (kid: string) => string | undefined;

/**
 * The part's JSON as the live objects are now; undefined when it is gone (an ended session). A
 * part carries the keys its state names, so a replica that reads it never lacks one, however long
 * ago the key was made.
 */
export function writePart(ctx: SandboxContext, name: string, keyJson: KeyJson): string | undefined {
  if (name === SANDBOX_PART) {
    const scenarios: Record<string, ReturnType<typeof instanceState>> = {};
    for (const instance of ctx.scenarios.loaded) scenarios[instance.name] = instanceState(instance);
    const startKids = ctx.ring.startKids();
    const kids = [...Object.values(startKids), ...Object.values(scenarios).flatMap((state) => kidsOf(state))];
    return JSON.stringify({ v: PART_VERSION, clock: ctx.clock.toState(), startKids, scenarios, keys: keysOf(kids, keyJson) });
  }
  if (name === LEDGER_PART) return JSON.stringify({ v: PART_VERSION, ledger: ctx.ledger.revocationsState() });
  const id = sessionOfPart(name);
  const session = id === undefined ? undefined : ctx.sessions.get(id);
  if (!session) return undefined;
  const stored = storedSession(session);
  return JSON.stringify({ ...stored, keys: keysOf(kidsOf(stored.state), keyJson) });
}

function kidsOf(state: ReturnType<typeof instanceState>): string[] {
  const { start, current, accepted, own } = state.keys;
  return [...(start ? [start] : []), ...(current ? [current] : []), ...accepted, ...own];
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
  return [SANDBOX_PART, LEDGER_PART, ...sessionPartNames(ctx)];
}

interface StoredSession extends SessionRecord {
  v: number;
  state: ReturnType<typeof instanceState>;
}

function storedSession(session: Session): StoredSession {
  const { instance } = session;
  return {
    v: PART_VERSION,
    id: session.id,
    file: instance.file,
    source: instance.source,
    profile: instance.profile,
    createdAt: session.createdAt,
    history: session.history,
    state: instanceState(instance),
  };
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
  if (name === SANDBOX_PART) {
    const part = data as { clock: Parameters<typeof ctx.clock.restore>[0]; startKids: Record<string, string>; scenarios: Record<string, unknown> };
    for (const [alg, kid] of Object.entries(part.startKids)) ctx.ring.adoptStartKey(alg as Algorithm, kid);
    ctx.clock.restore(part.clock);
    for (const instance of ctx.scenarios.loaded) {
      const state = part.scenarios[instance.name];
      if (state !== undefined) restoreInstance(instance, state as ReturnType<typeof instanceState>, ctx.merchants);
    }
    return;
  }
  if (name === LEDGER_PART) {
    ctx.ledger.restoreRevocations((data as { ledger: Parameters<typeof ctx.ledger.restoreRevocations>[0] }).ledger);
    return;
  }
  const stored = data as StoredSession;
  // Made on the stored start key (absorbed above): no key is generated only to be replaced.
  const session = await sessions.adopt(stored, stored.state.keys.start);
  session.history = stored.history;
  restoreInstance(session.instance, stored.state, ctx.merchants);
}

/** An ended session's part is gone: the session ends here too. */
export function dropPart(sessions: SessionStore, name: string): void {
  const id = sessionOfPart(name);
  if (id !== undefined) sessions.endQuietly(id);
}
