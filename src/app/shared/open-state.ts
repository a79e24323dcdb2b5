import { type Algorithm, ConfigError } from "../../core/config.js";
import type { KeyRing } from "../../core/keys.js";
import type { StateChanges, StateStore } from "../../core/state-store.js";
import { SANDBOX_PART } from "./parts.js";
import { STATE_TIMEOUT_MS } from "./state-timeout.js";

/**
 * The store of the `state` option: a Redis URL (the client is loaded only then), or a store given
 * as it is (a library user's, or tests' in-process MemoryStore shared by two sandboxes).
 */
export async function openState(state: string | StateStore, journalSize: number): Promise<StateStore> {
  if (typeof state !== "string") return state;
  const { openRedisStore } = await import("../../store/redis-store.js");
  try {
    return await openRedisStore(state, { journalSize, commandTimeoutMs: STATE_TIMEOUT_MS });
  } catch (e) {
    // A URL that cannot be used, a store that cannot be reached or is of another layout: the
    // start stops, saying which (the messages never show a password).
    throw new ConfigError(`${(e as Error).message} (--state, MERCHANT_SANDBOX_STATE)`, "state");
  }
}

/** The store's whole state, read once at start: a store that cannot be reached stops the start. */
export async function firstSync(store: StateStore): Promise<StateChanges> {
  try {
    return await store.sync("");
  } catch (e) {
    await store.close().catch(() => {});
    throw new ConfigError(
      `cannot read the shared state at ${store.shownAs}: ${(e as Error).message}. Start Redis there, or fix --state (MERCHANT_SANDBOX_STATE).`,
      "state",
    );
  }
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
