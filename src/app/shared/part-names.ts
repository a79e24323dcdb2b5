import type { SandboxContext } from "../context.js";
import type { RunScope } from "./shared-run.js";

/**
 * The names of the parts a sandbox's shared state is stored in (each part's content: part-kinds.ts),
 * made here and nowhere else: `sandbox`, `ledger` and `s:<id>`, one per session. A request that
 * changes state writes only the parts its scope names.
 */

export const SANDBOX_PART = "sandbox";
export const LEDGER_PART = "ledger";
const SESSION_PREFIX = "s:";
/** The parts a request reads only when it names them (a session's): what a commit tells the store (RunBasis). */
export const PRIVATE_PART_PREFIX = SESSION_PREFIX;

export function sessionPart(id: string): string {
  return `${SESSION_PREFIX}${id}`;
}

export function sessionOfPart(name: string): string | undefined {
  return name.startsWith(SESSION_PREFIX) ? name.slice(SESSION_PREFIX.length) : undefined;
}

/** The part a scenario's state is in: its session's, or the sandbox's. */
export function scopePart(sessionId: string | undefined): string {
  return sessionId === undefined ? SANDBOX_PART : sessionPart(sessionId);
}

/** A request whose scenario's rules may fire: its scenario's part, and the ledger. */
export function rulesScope(sessionId: string | undefined): RunScope {
  const part = scopePart(sessionId);
  return { parts: [part, LEDGER_PART], sessionsComeAndGo: false, dependsOn: part };
}

/**
 * A control-plane write: under /__sandbox/sessions/{id}, that session's part (and the ledger);
 * elsewhere (sessions made, the sandbox clock, a reset, minting) the sandbox's part, the ledger
 * and any session it makes or ends. A move of the sandbox clock changes no session's part: a
 * session's clock keeps only its own moves.
 */
export function controlScope(path: string): RunScope {
  const session = /^\/__sandbox\/sessions\/([^/]+)(?:\/|$)/.exec(path)?.[1];
  if (session !== undefined) return { parts: [sessionPart(decodeSegment(session)), LEDGER_PART], sessionsComeAndGo: false };
  return { parts: [SANDBOX_PART, LEDGER_PART], sessionsComeAndGo: true };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The parts of the live sessions. */
export function sessionPartNames(ctx: SandboxContext): string[] {
  return ctx.sessions.list().map((s) => sessionPart(s.id));
}
