import type { Algorithm } from "../../core/config.js";
import type { Session, SessionRecord, SessionStore } from "../../control/sessions.js";
import { type InstanceState, instanceState, restoreInstance } from "../../scenarios/instance-state.js";
import type { SandboxContext } from "../context.js";
import { LEDGER_PART, SANDBOX_PART, sessionOfPart, sessionPartNames } from "./part-names.js";

/** A key as stored (secret: the store holds it, nothing prints it), by kid; undefined when the ring lacks it. */
export type KeyJson = (kid: string) => string | undefined;

/**
 * One kind of part the shared state is stored in: which parts are of it, how the live objects are
 * written into one (JSON, from each object's toState or instanceState) and read back from it. A
 * part carries the keys its state names (`kids`), so a replica that reads it never lacks one,
 * however long ago the key was made. parts.ts does the rest for every kind alike: the layout
 * version, the keys, the order a sync reads them in.
 */
export interface PartKind<Data = unknown> {
  /** The names of the parts of this kind the live objects make now. */
  names(ctx: SandboxContext): string[];
  owns(name: string): boolean;
  /**
   * The part's content as the live objects are now, and the kids of the keys it names (none: the
   * kind never names a key); undefined when it is gone (an ended session).
   */
  write(ctx: SandboxContext, name: string): { data: Data; kids?: readonly string[] } | undefined;
  /** Brings the live objects to a stored part (another replica's change, or an undo), its keys absorbed already. */
  read(ctx: SandboxContext, sessions: SessionStore, name: string, data: Data): Promise<void> | void;
  /** The part is gone from the store: what the live objects hold of it goes too. */
  drop(sessions: SessionStore, name: string): void;
}

interface SandboxData {
  clock: ReturnType<SandboxContext["clock"]["toState"]>;
  startKids: Record<string, string>;
  scenarios: Record<string, InstanceState>;
}

/** `sandbox`: the sandbox clock, the start keys, the loaded scenarios' state. */
const sandboxPart: PartKind<SandboxData> = {
  names: () => [SANDBOX_PART],
  owns: (name) => name === SANDBOX_PART,
  write(ctx) {
    const scenarios: Record<string, InstanceState> = {};
    for (const instance of ctx.scenarios.loaded) scenarios[instance.name] = instanceState(instance);
    const startKids = ctx.ring.startKids();
    const kids = [...Object.values(startKids), ...Object.values(scenarios).flatMap(kidsOf)];
    return { data: { clock: ctx.clock.toState(), startKids, scenarios }, kids };
  },
  read(ctx, _sessions, _name, data) {
    for (const [alg, kid] of Object.entries(data.startKids)) ctx.ring.adoptStartKey(alg as Algorithm, kid);
    ctx.clock.restore(data.clock);
    for (const instance of ctx.scenarios.loaded) {
      const state = data.scenarios[instance.name];
      if (state !== undefined) restoreInstance(instance, state, ctx.merchants);
    }
  },
  drop: () => {},
};

/** `ledger`: revocations and early expiries (issued tokens' records go by the store's record log). */
const ledgerPart: PartKind<{ ledger: ReturnType<SandboxContext["ledger"]["revocationsState"]> }> = {
  names: () => [LEDGER_PART],
  owns: (name) => name === LEDGER_PART,
  write: (ctx) => ({ data: { ledger: ctx.ledger.revocationsState() } }),
  read: (ctx, _sessions, _name, data) => ctx.ledger.restoreRevocations(data.ledger),
  drop: () => {},
};

interface SessionData extends SessionRecord {
  state: InstanceState;
}

/** `s:<id>`: a session, how to make it, its scenario's state, its history. */
const sessionParts: PartKind<SessionData> = {
  names: sessionPartNames,
  owns: (name) => sessionOfPart(name) !== undefined,
  write(ctx, name) {
    const session = ctx.sessions.get(sessionOfPart(name)!);
    if (!session) return undefined;
    const data = sessionData(session);
    return { data, kids: kidsOf(data.state) };
  },
  async read(ctx, sessions, _name, data) {
    // Made on the stored start key (absorbed already): no key is generated only to be replaced.
    const session = await sessions.adopt(data, data.state.keys.start);
    session.history = data.history;
    restoreInstance(session.instance, data.state, ctx.merchants);
  },
  drop: (sessions, name) => sessions.endQuietly(sessionOfPart(name)!),
};

/**
 * Every kind of part, in the order a sync reads them: the sandbox's first (its start keys), then
 * the ledger, then the sessions. A new kind of shared state is one more entry here.
 */
export const PART_KINDS: readonly PartKind[] = [registered(sandboxPart), registered(ledgerPart), registered(sessionParts)];

/** A kind among the others: the data it reads is what it wrote, parsed from the stored JSON. */
function registered<Data>(kind: PartKind<Data>): PartKind {
  return kind as unknown as PartKind;
}

function sessionData(session: Session): SessionData {
  const { instance } = session;
  return {
    id: session.id,
    file: instance.file,
    source: instance.source,
    profile: instance.profile,
    createdAt: session.createdAt,
    history: session.history,
    state: instanceState(instance),
  };
}

function kidsOf(state: InstanceState): string[] {
  const { start, current, accepted, own } = state.keys;
  return [...(start ? [start] : []), ...(current ? [current] : []), ...accepted, ...own];
}
