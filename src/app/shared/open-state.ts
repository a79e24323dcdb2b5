import { type Algorithm, ConfigError } from "../../core/config.js";
import { StateUnavailable } from "../../core/errors.js";
import type { KeyRing } from "../../core/keys.js";
import type { StateChanges, StateStore } from "../../core/state-store.js";
import { SANDBOX_PART } from "./part-names.js";
import { STATE_TIMEOUT_MS } from "./state-timings.js";

/** How long a start waits for a first connection to Redis before it goes on without it. */
const FIRST_CONNECTION_MS = 2000;

export interface OpenedState {
  readonly store: StateStore;
  /** The store's whole state, read once at start; undefined when it could not be read yet. */
  readonly first: StateChanges | undefined;
  /** Why it could not, for the operator (no password in it). */
  readonly waiting: StateUnavailable | undefined;
}

/**
 * The store of the `state` option (a Redis URL, whose client is loaded only then, or a store
 * given as it is), and its whole state read once. A store that cannot be read yet is waited for
 * by the replica, which starts unhealthy (`waiting`), unless `required`: then, as for a URL that
 * cannot be used or a store of another layout, the start stops, saying why (never a password).
 */
export async function openState(state: string | StateStore, journalSize: number, required: boolean): Promise<OpenedState> {
  let store: StateStore;
  if (typeof state === "string") {
    const { connectRedisStore } = await import("../../store/redis-store.js");
    let redis: ReturnType<typeof connectRedisStore>;
    try {
      redis = connectRedisStore(state, { journalSize, commandTimeoutMs: STATE_TIMEOUT_MS });
    } catch (e) {
      throw new ConfigError(`${(e as Error).message} (--state)`, "state");
    }
    await redis.ready(FIRST_CONNECTION_MS);
    store = redis;
  } else store = state;
  try {
    return { store, first: await store.sync(""), waiting: undefined };
  } catch (e) {
    const unavailable = e instanceof StateUnavailable ? e : new StateUnavailable(String((e as Error)?.message ?? e));
    if (!required && unavailable.name !== "StoreLayoutMismatch") return { store, first: undefined, waiting: unavailable };
    await store.close().catch(() => {});
    const refusal = startRefusal(unavailable, required);
    // The network, not the value given: nothing to fix in the command line, so no usage error.
    if (UNREACHABLE.test(unavailable.description)) throw new StateUnreachableAtStart(refusal);
    throw new ConfigError(refusal, "state");
  }
}

/** What a store that cannot be reached says (a refused, unresolved, unroutable or silent address). */
const UNREACHABLE = /\bE(?:CONNREFUSED|NOTFOUND|AI_AGAIN|TIMEDOUT|HOSTUNREACH|NETUNREACH|CONNRESET)\b|did not answer|timed out/;

/**
 * --require-state and a store the network does not reach at start: a runtime failure (the CLI's
 * exit 3, without a usage hint), where a store that refuses the value given (a wrong password, a
 * layout of another version) stays a ConfigError, a usage error.
 */
export class StateUnreachableAtStart extends Error {
  override readonly name = "StateUnreachableAtStart";
}

/** What the store said failed, without what a running replica does about it (the caller says that). */
export function whatFailed(e: StateUnavailable): string {
  return e.description.replace(/ The replica reconnects by itself; .*$/, "");
}

/** Why the start stops: the store's own words, without what a running replica would do next. */
function startRefusal(e: StateUnavailable, required: boolean): string {
  const said = whatFailed(e);
  return required && e.name !== "StoreLayoutMismatch"
    ? `${said} Start Redis there or fix --state; without --require-state the replica would start unhealthy and wait for it.`
    : said;
}

/** The keys other replicas made, and the start keys they use: this replica signs with the same. */
export async function adoptStoredKeys(ring: KeyRing, first: StateChanges): Promise<void> {
  if (first.keys.length > 0) await ring.absorbKeys(first.keys);
  const sandbox = first.parts.find((p) => p.name === SANDBOX_PART);
  if (!sandbox) return;
  const { startKids, keys } = JSON.parse(sandbox.json) as { startKids?: Record<string, string>; keys?: string[] };
  if (keys !== undefined && keys.length > 0) await ring.absorbKeys(keys);
  for (const [alg, kid] of Object.entries(startKids ?? {})) ring.adoptStartKey(alg as Algorithm, kid);
}
