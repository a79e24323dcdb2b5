import { AsyncLocalStorage } from "node:async_hooks";
import type { KeyRing } from "../../core/keys.js";
import { exportSigningKey, type SigningKey } from "../../core/signing-keys.js";
import type { Attempt } from "./attempt.js";
import type { KeyJson } from "./parts.js";
import type { FeedEvent } from "./shared-events.js";

/** Key exports kept (a part carries the keys it names; each is exported once). */
const MAX_KEY_EXPORTS = 4096;

/**
 * The request runs under way on a replica that shares its state, each with what it collects for
 * its commit: the events, tokens and keys it made, the delays it owes. Code that makes them (the
 * event hub, the ledger, the key ring, rule delays) reaches the run it belongs to through these
 * sinks, whatever it awaits in between; outside a run (a sync applying another replica's changes)
 * nothing is collected.
 */
export class Runs {
  private readonly storage = new AsyncLocalStorage<Attempt>();
  /** How scenario delays wait (the sandbox's `sleep`). */
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  current(): Attempt | undefined {
    return this.storage.getStore();
  }

  run<T>(attempt: Attempt, work: () => T): T {
    return this.storage.run(attempt, work);
  }

  /** Outside any run: another replica's changes applied to the objects are no request's. */
  exit<T>(work: () => T): T {
    return this.storage.exit(work);
  }

  /** The events the current run collects (SharedEventHub's source). */
  readonly collectEvents = (): FeedEvent[] | undefined => this.current()?.events;

  /** The ledger's sink: a token's record goes with the commit of the request that issued it. */
  readonly collectRecord = (json: string): boolean => {
    const run = this.current();
    run?.records.push(json);
    return run !== undefined;
  };

  /** The key ring's sink: a key goes with the commit of the request that made it. */
  readonly collectKey = (key: SigningKey): boolean => {
    const run = this.current();
    run?.keys.push(key);
    return run !== undefined;
  };

  /**
   * Scenario delays: a run that holds the lock waits for them after its commit, so one session's
   * slow rule never holds up the replica's other changes.
   */
  deferredSleep(sleep: (ms: number) => Promise<void>): (ms: number) => Promise<void> {
    this.sleep = sleep;
    return (ms) => {
      const run = this.current();
      if (!run?.release) return sleep(ms);
      run.delayMs += ms;
      return Promise.resolve();
    };
  }
}

/** Each key's stored JSON, made once per key. */
export function keyExports(ring: KeyRing): KeyJson {
  const made = new Map<string, string>();
  return (kid) => {
    let json = made.get(kid);
    if (json !== undefined) return json;
    const key = ring.find(kid);
    if (!key) return undefined;
    if (made.size >= MAX_KEY_EXPORTS) made.clear();
    json = exportSigningKey(key);
    made.set(kid, json);
    return json;
  };
}
