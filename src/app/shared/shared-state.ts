import { StateUnavailable } from "../../core/errors.js";
import type { SandboxRequest, SandboxResponse } from "../../core/http-types.js";
import { exportSigningKey } from "../../core/signing-keys.js";
import type { StateChanges, StateStore } from "../../core/state-store.js";
import type { Journal, JournalRecord } from "../../control/journal.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { type FeedFollower, followFeed } from "./feed-follower.js";
import { type KeyJson, LEDGER_PART, partNames, SANDBOX_PART, sessionOfPart, sessionPart, writePart } from "./parts.js";
import { keyExports, Runs } from "./runs.js";
import { StoredParts } from "./stored-parts.js";
import type { SharedEventHub } from "./shared-events.js";
import { JournalMirror } from "./journal-mirror.js";
import { type Attempt, asUnavailable, newAttempt } from "./attempt.js";
import type { SharedRun } from "./shared-run.js";

/** How long a store call may take before the request is answered 503 (the store's command timeout). */
export const STATE_TIMEOUT_MS = 2000;
/**
 * A commit must reach the store within half the timeout, or the store refuses it: its answer then
 * still reaches this replica before the timeout, so a client answered 503 is never one whose commit
 * was stored after all.
 */
const COMMIT_DEADLINE_MS = STATE_TIMEOUT_MS / 2;
/** Runs of one request that lost the race for the parts it changes before it is answered 503. */
const MAX_ATTEMPTS = 25;
/** How often a replica asks the store to end idle sessions. */
const REAP_EVERY_MS = 1000;

/**
 * A replica's side of the shared state (`--state`): before a request, the changes other replicas
 * made are applied to this replica's objects (`sync`); the request runs on them as in memory; then
 * its changes, journal entry and events are committed in one atomic call. A request that changes
 * state (a control-plane write, a scenario rule that may fire) holds this replica's lock and
 * commits only if the parts it read are still as it read them; else it is undone and run again.
 * Every other request commits its journal entry (and the tokens it issued) unconditionally.
 */
export class SharedState implements SharedRun {
  private cursor = "";
  /** Each part as last synced or committed: its version and JSON. */
  private readonly parts: StoredParts;
  /** The request runs under way, and what each collects for its commit. */
  readonly runs = new Runs();
  private readonly keyJson: KeyJson;
  private readonly mirror: JournalMirror;
  /** Reading parts into the objects (a sync's, an undo's): one at a time. */
  private turn: Promise<void> = Promise.resolve();
  private syncing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private follower: FeedFollower | undefined;
  private reaper: ReturnType<typeof setInterval> | undefined;
  private reaping = false;

  constructor(
    readonly store: StateStore,
    private readonly ctx: SandboxContext,
    private readonly sessions: SessionStore,
    hub: SharedEventHub,
    journal: Journal,
    private readonly idleMs: number,
  ) {
    this.parts = new StoredParts(ctx, sessions);
    this.keyJson = keyExports(ctx.ring);
    this.mirror = new JournalMirror(store, journal, hub, sessions);
  }

  /**
   * Applies the store's state as this replica starts (`first`: the sync made before the
   * scenarios, for the keys), stores the parts when it is the first replica, loads the journal and
   * starts following the feed.
   */
  async begin(first: StateChanges): Promise<void> {
    await this.apply(first);
    if (!this.parts.has(SANDBOX_PART)) {
      await this.storeOwnParts();
    }
    // The feed's end first, then the journal: a request committed in between is in both, and
    // kept once (by its number), rather than in neither.
    this.follower = await followFeed(this.store, (entries) => this.mirror.fromFeed(entries));
    await this.mirror.reload();
    this.reaper = setInterval(() => void this.reap(), REAP_EVERY_MS);
    this.reaper.unref?.();
  }

  /**
   * The sandbox's own parts, stored as this replica holds them: by the first replica, and again
   * after the store lost its data (a Redis restarted without persistence), so a replica started
   * later finds the keys and clocks the running ones use. Another replica that stored them first wins.
   */
  private async storeOwnParts(): Promise<void> {
    const writes = [SANDBOX_PART, LEDGER_PART].map((name) => ({ name, json: writePart(this.ctx, name, this.keyJson) }));
    const result = await this.store.commit({
      read: { [SANDBOX_PART]: 0, [LEDGER_PART]: 0 },
      writes,
      records: [],
      keys: this.ctx.ring.takeNewKeys(),
      events: [],
      deadlineMs: Date.now() + COMMIT_DEADLINE_MS,
    });
    if (result.ok) for (const w of writes) this.parts.committed(w.name, 1, w.json);
    // Another replica stored them first: read theirs (directly: this may run inside a sync).
    else await this.syncOnce();
  }

  async close(): Promise<void> {
    if (this.reaper) clearInterval(this.reaper);
    this.follower?.stop();
    await this.store.close();
    await this.follower?.done;
  }

  /** The request handler over the in-memory pipeline `inner`. */
  wrap(
    inner: (request: SandboxRequest) => Promise<SandboxResponse>,
    unavailable: (error: StateUnavailable, request: SandboxRequest) => SandboxResponse,
  ) {
    return async (request: SandboxRequest): Promise<SandboxResponse> => {
      if (request.path === "/__sandbox/health") {
        // Healthy only when this replica can read the shared state and apply it, not just reach the store.
        try {
          await this.sync();
        } catch (e) {
          return unavailable(asUnavailable(e, this.store, true), request);
        }
        return inner(request);
      }
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        try {
          await this.sync();
          if (request.path.startsWith("/__sandbox/")) await this.follower?.catchUp();
        } catch (e) {
          return unavailable(asUnavailable(e, this.store), request);
        }
        const run = newAttempt();
        let response: SandboxResponse;
        // A copy per run: a library user handling one request object twice at once gets two runs.
        const mine = { ...request };
        try {
          this.runs.bind(mine, run);
          response = await inner(mine);
        } catch (e) {
          this.runs.release(run);
          throw e;
        }
        const outcome = await this.commit(run);
        if (outcome === "ok") {
          if (run.delayMs > 0) await this.runs.sleep(run.delayMs);
          run.logged?.(undefined);
          return response;
        }
        response.stream?.cancel();
        if (outcome !== "conflict") {
          run.logged?.(outcome);
          return unavailable(outcome, request);
        }
      }
      const busy = new StateUnavailable(
        `This request lost the race for the state it changes ${MAX_ATTEMPTS} times in a row: other requests change the same session at the same time. Retry it.`,
      );
      return unavailable(busy, request);
    };
  }

  /**
   * The current request will change state: it waits for this replica's other such requests, and
   * its commit applies only if the parts it may change are still as they are now. `scope`: the
   * part its scenario's state is in; undefined: any part (a control-plane write).
   */
  async exclusive(request: object, scope: string | undefined): Promise<void> {
    const run = this.runs.of(request);
    if (!run || run.release) return;
    run.release = await this.runs.acquire();
    this.runs.hold(run);
    run.allParts = scope === undefined;
    run.scope = scope;
    const names = scope === undefined ? partNames(this.ctx) : [scope, LEDGER_PART];
    run.read = new Map(names.map((name) => [name, this.parts.version(name)]));
  }

  /** The request's journal record: numbered by the store when committed. */
  journalRecord(request: object, record: JournalRecord): void {
    const run = this.runs.of(request);
    if (run) run.journal = record;
  }

  /** The request was its session's use (its idle time starts again, on every replica). */
  touch(request: object, session: string): void {
    const run = this.runs.of(request);
    if (run) run.touch = session;
  }

  /** The request's log line waits for its commit: a run that lost a race is not logged. */
  whenCommitted(request: object, log: (unavailable: StateUnavailable | undefined) => void): boolean {
    const run = this.runs.of(request);
    if (!run) return false;
    run.logged = log;
    return true;
  }

  /** The whole sandbox was reset (a control-plane write, under the lock): the journal and the feed start again on every replica. */
  clearAfterCommit(): void {
    const run = this.runs.holder;
    if (run) run.clearStore = true;
  }

  /** Applies what other replicas changed since the last sync; concurrent callers share one. */
  sync(): Promise<void> {
    if (!this.syncing) {
      this.syncing = this.syncOnce().finally(() => {
        this.syncing = undefined;
      });
      return this.syncing;
    }
    // A sync under way may have been sent before this request came: one more, shared by all who wait.
    this.queued ??= this.syncing
      .catch(() => {})
      .then(() => {
        this.queued = undefined;
        return this.sync();
      });
    return this.queued;
  }

  private async syncOnce(): Promise<void> {
    await this.apply(await this.store.sync(this.cursor));
  }

  /**
   * Another replica's changes reach this replica's objects outside any request's collecting, one
   * batch at a time, in turn with undoing failed runs (both read parts into the objects).
   */
  private async apply(changes: StateChanges): Promise<void> {
    await this.inTurn(() => this.parts.apply(changes));
    // Syncs run one at a time, so each starts where the last one ended (cursors are the store's own).
    this.cursor = changes.cursor;
    // A full answer: the store lost its data, or this replica was away longer than it keeps
    // changes. Its journal is read again, and the sandbox's parts stored again if they are gone.
    if (changes.full && this.follower !== undefined) {
      await this.mirror.reload();
      if (!this.parts.has(SANDBOX_PART)) await this.storeOwnParts();
    }
  }

  private inTurn(work: () => Promise<void>): Promise<void> {
    const run = this.turn.then(work);
    this.turn = run.catch(() => {});
    return run;
  }

  private async commit(run: Attempt): Promise<"ok" | "conflict" | StateUnavailable> {
    const read: Record<string, number> = {};
    const writes: Array<{ name: string; json: string | undefined }> = [];
    try {
      if (run.read) {
        const names = new Set(run.read.keys());
        if (run.allParts) for (const name of partNames(this.ctx)) names.add(name);
        for (const name of names) {
          const json = writePart(this.ctx, name, this.keyJson);
          const found = run.read.get(name) ?? 0;
          if (json !== this.parts.json(name)) {
            read[name] = found;
            writes.push({ name, json });
          } else if (this.parts.version(name) !== found || name === run.scope) {
            // Unchanged now, yet the run read it: another replica's change, applied here while
            // the run was under way, may have overwritten what the run did (it then holds only
            // if nobody changed the part since the run found it).
            read[name] = found;
          }
        }
      }
    } catch (e) {
      this.runs.release(run);
      throw e;
    }
    // A session made now starts its idle time now: the store reaps only sessions it saw used.
    const made = writes.find((w) => w.json !== undefined && read[w.name] === 0 && sessionOfPart(w.name) !== undefined);
    const touched = run.touch ?? (made && sessionOfPart(made.name));
    // The run's own tokens and keys, and any made outside a request (taken back if this fails).
    const spare = { records: this.ctx.ledger.takeNewRecords(), keys: this.ctx.ring.takeNewKeys() };
    const issued = this.runs.takeIssued(run.journal?.tokenId);
    const records = [...(issued === undefined ? [] : [issued]), ...run.records, ...spare.records];
    const keys = [...run.keys.map((k) => ({ kid: k.kid, json: exportSigningKey(k) })), ...spare.keys];
    try {
      const result = await this.store.commit({
        read,
        writes,
        records,
        keys,
        ...(run.journal && { journal: JSON.stringify(withDelay(run.journal, run.delayMs)) }),
        events: run.events.map((e) => JSON.stringify(e)),
        ...(touched && { touch: { session: touched, atMs: Date.now() } }),
        deadlineMs: Date.now() + COMMIT_DEADLINE_MS,
      });
      if (result.ok) {
        for (const w of writes) this.parts.committed(w.name, read[w.name]! + 1, w.json);
        // Stored: whatever the clear that follows does, the client is answered as committed.
        if (run.clearStore) await this.store.clear().catch(() => {});
        return "ok";
      }
      await this.undo(writes, spare);
      return result.reason === "conflict" ? "conflict" : asUnavailable(undefined, this.store);
    } catch (e) {
      await this.undo(writes, spare);
      return asUnavailable(e, this.store);
    } finally {
      this.runs.release(run);
    }
  }

  /** A run whose commit failed: its changes leave this replica's objects too. */
  private async undo(
    writes: ReadonlyArray<{ name: string }>,
    spare: { records: string[]; keys: Array<{ kid: string; json: string }> },
  ): Promise<void> {
    this.ctx.ledger.requeueRecords(spare.records);
    this.ctx.ring.requeueKeys(spare.keys);
    await this.inTurn(() => this.parts.restore(writes.map((w) => w.name)));
  }

  /** Sessions no replica used within the idle limit end, once, told to every replica's streams. */
  private async reap(): Promise<void> {
    if (this.reaping) return;
    this.reaping = true;
    try {
      const ids = await this.store.reap(Date.now() - this.idleMs, 100);
      if (ids.length === 0) return;
      // Under the lock, as a run of its own: the streams' "ended" events go with its commit.
      const run = newAttempt();
      run.release = await this.runs.acquire();
      this.runs.hold(run);
      try {
        for (const id of ids) this.sessions.endReaped(id);
        for (const id of ids) this.parts.forget(sessionPart(id));
        const events = run.events.map((e) => JSON.stringify(e));
        await this.store.commit({ read: {}, writes: [], records: [], keys: [], events, deadlineMs: Date.now() + COMMIT_DEADLINE_MS });
      } finally {
        this.runs.release(run);
      }
    } catch {
      // The store is away: the next round tries again.
    } finally {
      this.reaping = false;
    }
  }
}

/** The journal record of a run whose rule delays are waited for after its commit: its duration includes them. */
function withDelay(record: JournalRecord, delayMs: number): JournalRecord {
  return delayMs > 0 ? { ...record, durationMs: Math.round((record.durationMs + delayMs) * 1000) / 1000 } : record;
}
