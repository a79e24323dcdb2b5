import type { KeyRing } from "../../core/keys.js";
import { exportSigningKey, type SigningKey } from "../../core/signing-keys.js";
import type { Attempt } from "./attempt.js";
import type { KeyJson } from "./parts.js";
import type { FeedEvent } from "./shared-events.js";

/** Key exports kept (a part carries the keys it names; each is exported once). */
const MAX_KEY_EXPORTS = 4096;

/** Issued-token records waiting for the commit of the request that issued them. */
const MAX_WAITING_RECORDS = 20_000;

/**
 * The request runs under way on a replica that shares its state, and what each collects for its
 * commit. The pipeline is handed each run with its request (SharedRun); what the objects below the
 * pipeline make goes to the run that holds the replica's lock: only such runs change state, and
 * one at a time (events of clock moves, sessions and history; keys; tokens minted; rule delays).
 * A token the exchange or the login issues waits here, by jti, for its own request's commit.
 * No AsyncLocalStorage: its promise hooks cost every promise of the process.
 */
export class Runs {
  private holding: Attempt | undefined;
  private lock: Promise<void> = Promise.resolve();
  /** Times the lock was given, and how many hold it now (0 or 1). */
  private turns = 0;
  private active = 0;
  private readonly issued = new Map<string, string>();
  /** How scenario delays wait (the sandbox's `sleep`). */
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  /** The run that holds the replica's lock, if any. */
  get holder(): Attempt | undefined {
    return this.holding;
  }

  /**
   * How many times the lock was given, or -1 while it is held: a run without the lock that began
   * while it was held, or sees the count move before it commits, may have read a locking run's
   * changes (see RunCommit).
   */
  get lockTurns(): number {
    return this.active > 0 ? -1 : this.turns;
  }

  /** Resolves once every run that asked for the lock before this call is done with it (taking no turn). */
  lockedRunsDone(): Promise<void> {
    return this.lock;
  }

  /** This replica's lock: resolves when it is this caller's, with how to give it back. */
  async acquire(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = this.lock;
    this.lock = before.then(() => mine);
    await before;
    this.turns++;
    this.active++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.active--;
      release();
    };
  }

  /** The run is done with the lock (if it held it). */
  release(run: Attempt): void {
    this.unhold(run);
    run.release?.();
  }

  hold(attempt: Attempt): void {
    this.holding = attempt;
  }

  unhold(attempt: Attempt): void {
    if (this.holding === attempt) this.holding = undefined;
  }

  /** The events the holding run collects (SharedEventHub's source). */
  readonly collectEvents = (): FeedEvent[] | undefined => this.holding?.events;

  /**
   * The ledger's sink. A minted token (the control plane's, under the lock) goes with the holding
   * run; an issued one waits for its request's commit (`takeIssued`).
   */
  readonly collectRecord = (json: string, minted: boolean, jti: string): boolean => {
    if (minted) {
      this.holding?.records.push(json);
      return this.holding !== undefined;
    }
    if (this.issued.size >= MAX_WAITING_RECORDS) this.issued.delete(this.issued.keys().next().value!);
    this.issued.set(jti, json);
    return true;
  };

  /** The record of the token `jti` a request issued, taken for its commit. */
  takeIssued(jti: string | undefined): string | undefined {
    if (jti === undefined) return undefined;
    const json = this.issued.get(jti);
    this.issued.delete(jti);
    return json;
  }

  /** The key ring's sink: a key goes with the commit of the holding run (rotations happen under the lock). */
  readonly collectKey = (key: SigningKey): boolean => {
    this.holding?.keys.push(key);
    return this.holding !== undefined;
  };

  /**
   * Scenario delays (rules fire only under the lock): waited for after the commit, so one
   * session's slow rule never holds up the replica's other changes.
   */
  readonly deferredSleep = (ms: number): Promise<void> => {
    const run = this.holding;
    if (!run) return this.sleep(ms);
    run.delayMs += ms;
    return Promise.resolve();
  };
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
