import { randomBytes } from "node:crypto";
import { type SandboxError, StateUnavailable } from "../../core/errors.js";
import type { SandboxRequest, SandboxResponse } from "../../core/http-types.js";
import { exportSigningKey } from "../../core/signing-keys.js";
import type { CommitRequest, PartWrite, StateChanges, StateStore } from "../../core/state-store.js";
import type { Journal, JournalRecord } from "../../control/journal.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { type FeedFollower, followFeed } from "./feed-follower.js";
import { type KeyJson, LEDGER_PART, partNames, sessionOfPart, sessionPart } from "./parts.js";
import { keyExports, Runs } from "./runs.js";
import { StoredParts } from "./stored-parts.js";
import type { SharedEventHub } from "./shared-events.js";
import { JournalMirror } from "./journal-mirror.js";
import { type Attempt, asUnavailable, newAttempt } from "./attempt.js";
import type { SharedRun } from "./shared-run.js";
import { snapshot } from "./reseed.js";
import { commitKnown, isUnknownOutcome, tooManySessions } from "./commit-outcome.js";
import { STATE_TIMEOUT_MS } from "./state-timeout.js";
import { changedParts } from "./changed-parts.js";
import { Reaper } from "./reaper.js";
import { coalesced } from "./coalesced.js";

/**
 * A commit that reaches the store later than this is refused there: by then this replica is
 * settling it (see settle), and a commit that comes after its settling must not apply.
 */
const COMMIT_DEADLINE_MS = STATE_TIMEOUT_MS;

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
  /** The store's epoch this replica's objects were last brought to; undefined before the first. */
  private epoch: string | undefined;
  /** The lineage of the state this replica holds (see StateChanges.lineage). */
  private lineage: string | undefined;
  /** How far into `epoch` this replica's objects go: the highest position it synced or committed. */
  private position = 0;
  /** Commit ids: this replica's own prefix and a count, so no two commits anywhere share one. */
  private readonly commitPrefix = randomBytes(8).toString("hex");
  private commits = 0;
  /** Each part as last synced or committed: its version and JSON. */
  private readonly parts: StoredParts;
  /** The request runs under way, and what each collects for its commit. */
  readonly runs = new Runs();
  private readonly keyJson: KeyJson;
  private readonly mirror: JournalMirror;
  /** Reading parts into the objects (a sync's, an undo's): one at a time. */
  private turn: Promise<void> = Promise.resolve();
  private follower: FeedFollower | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private readonly reaper: Reaper;

  constructor(
    readonly store: StateStore,
    private readonly ctx: SandboxContext,
    private readonly sessions: SessionStore,
    hub: SharedEventHub,
    private readonly journal: Journal,
    idleMs: number,
  ) {
    this.parts = new StoredParts(ctx, sessions);
    this.keyJson = keyExports(ctx.ring);
    this.mirror = new JournalMirror(store, journal, hub, sessions);
    this.reaper = new Reaper(store, this.runs, sessions, this.parts, idleMs, (events) =>
      commitKnown(store, this.request({ read: {}, writes: [], records: [], keys: [], events })),
    );
  }

  /**
   * Applies the store's state as this replica starts (`first`: the sync made before the
   * scenarios, for the keys), or seeds an empty store with this replica's, then loads the journal
   * and starts following the feed.
   */
  async begin(first: StateChanges): Promise<void> {
    if (first.lineage === undefined) {
      // Nothing seeded: this replica's state as it starts is the deployment's, unless another
      // replica starting at once seeded first (then its state is adopted).
      this.lineage = first.epoch;
      if (!(await this.reseed())) await this.apply(await this.store.sync(""));
    } else await this.apply(first);
    // The feed's end first, then the journal: a request committed in between is in both, and
    // kept once (by its number), rather than in neither.
    this.follower = await followFeed(this.store, (entries) => this.mirror.fromFeed(entries));
    await this.mirror.reload();
    this.ticker = setInterval(() => void this.tick(), REAP_EVERY_MS);
    this.ticker.unref?.();
  }

  /**
   * Writes this replica's whole state into the store (empty, or seeded by a younger lineage).
   * False when the store refused: it holds state of an older or the same lineage.
   */
  private async reseed(): Promise<boolean> {
    // Under the lock: no run is halfway through its changes, so the state written is committed state.
    const release = await this.runs.acquire();
    try {
      const from = { lineage: this.lineage!, fromEpoch: this.epoch ?? "", position: this.position };
      const state = snapshot(this.ctx, this.sessions, this.journal, from, this.keyJson);
      const result = await this.store.reseed(state);
      if (!result.ok) return false;
      this.parts.reseeded(state.parts);
      this.cursor = result.cursor;
      this.epoch = result.epoch;
      return true;
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.follower?.stop();
    await this.store.close();
    await this.follower?.done;
  }

  /** The request handler over the in-memory pipeline `inner`; `unavailable` answers a refusal of the shared state's. */
  wrap(inner: (request: SandboxRequest) => Promise<SandboxResponse>, unavailable: (error: SandboxError, request: SandboxRequest) => SandboxResponse) {
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
          if (outcome instanceof StateUnavailable) run.logged?.(outcome);
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
  readonly sync = coalesced(() => this.syncOnce());

  private async syncOnce(): Promise<void> {
    await this.apply(await this.store.sync(this.cursor));
  }

  /**
   * Another replica's changes reach this replica's objects outside any request's collecting, one
   * batch at a time, in turn with undoing failed runs (both read parts into the objects). A store
   * in another epoch than this replica built on lost its data, or was reseeded: see newEpoch.
   */
  private async apply(changes: StateChanges): Promise<void> {
    if (this.epoch !== undefined && changes.epoch !== this.epoch) {
      const adopted = await this.newEpoch(changes);
      if (adopted === undefined) return;
      changes = adopted;
    }
    await this.inTurn(() => this.parts.apply(changes));
    // Syncs run one at a time, so each starts where the last one ended (cursors are the store's own).
    this.cursor = changes.cursor;
    if (changes.epoch !== this.epoch) this.position = 0;
    this.position = Math.max(this.position, changes.position);
    this.epoch = changes.epoch;
    this.lineage = changes.lineage ?? this.lineage;
    // A full answer: another epoch, or this replica was away longer than the store keeps
    // changes. Its journal is read again.
    if (changes.full && this.follower !== undefined) await this.mirror.reload();
  }

  /**
   * The store is not in the epoch this replica's objects are in. When it holds the state of an
   * older deployment, that state is adopted (the changes to apply). Otherwise this replica offers
   * its own state (reseed): the store takes it when it is emptied, seeded by a replica started
   * since (a younger lineage), or reseeded from this replica's epoch by one that had seen less of
   * it; then there is nothing to apply (undefined). Else the store's state is adopted.
   */
  private async newEpoch(changes: StateChanges): Promise<StateChanges | undefined> {
    const stored = changes.lineage;
    if (stored !== undefined && BigInt(stored) < BigInt(this.lineage!)) return changes;
    if (await this.reseed()) return undefined;
    // Another replica of an older or the same lineage reseeded it first: its state is adopted.
    return this.store.sync("");
  }

  private inTurn(work: () => Promise<void>): Promise<void> {
    const run = this.turn.then(work);
    this.turn = run.catch(() => {});
    return run;
  }

  private async commit(run: Attempt): Promise<"ok" | "conflict" | SandboxError> {
    let read: Record<string, number>;
    let writes: PartWrite[];
    try {
      ({ read, writes } = changedParts(run, this.ctx, this.parts, this.keyJson));
    } catch (e) {
      this.runs.release(run);
      throw e;
    }
    // A session made now joins the live ones (the store refuses one past --max-sessions) and
    // starts its idle time now: the store reaps only sessions it saw used.
    const made = writes.find((w) => w.json !== undefined && read[w.name] === 0 && sessionOfPart(w.name) !== undefined);
    const touched = run.touch !== undefined ? sessionPart(run.touch) : made?.name;
    // The run's own tokens and keys, and any made outside a request (taken back if this fails).
    const spare = { records: this.ctx.ledger.takeNewRecords(), keys: this.ctx.ring.takeNewKeys() };
    const issued = this.runs.takeIssued(run.journal?.tokenId);
    const records = [...(issued === undefined ? [] : [issued]), ...run.records, ...spare.records];
    const keys = [...run.keys.map((k) => ({ kid: k.kid, json: exportSigningKey(k) })), ...spare.keys];
    try {
      const result = await commitKnown(
        this.store,
        this.request({
          read,
          writes,
          records,
          keys,
          ...(run.journal && { journal: JSON.stringify(withDelay(run.journal, run.delayMs)) }),
          events: run.events.map((e) => JSON.stringify(e)),
          ...(touched && { touch: { part: touched, atMs: Date.now() } }),
          ...(made && { admit: { part: made.name, max: this.sessions.limits.maxSessions } }),
          ...(run.clearStore && { clearLogs: true }),
        }),
      );
      if (result.ok) {
        this.position = Math.max(this.position, result.position);
        for (const w of writes) this.parts.committed(w.name, read[w.name]! + 1, w.json);
        return "ok";
      }
      await this.undo(writes, spare, run);
      if (result.reason === "conflict") return "conflict";
      if (result.reason === "full") return tooManySessions(this.sessions.limits.maxSessions);
      return asUnavailable(undefined, this.store);
    } catch (e) {
      await this.undo(writes, spare, run);
      return isUnknownOutcome(e) ? e : asUnavailable(e, this.store);
    } finally {
      this.runs.release(run);
    }
  }

  /** A commit request of this replica: a new id, the epoch its objects are in, and the deadline. */
  private request(fields: Omit<CommitRequest, "id" | "epoch" | "deadlineMs">): CommitRequest {
    return { id: `${this.commitPrefix}:${++this.commits}`, epoch: this.epoch!, deadlineMs: Date.now() + COMMIT_DEADLINE_MS, ...fields };
  }

  /** A run whose commit failed: its changes leave this replica's objects too. */
  private async undo(
    writes: ReadonlyArray<{ name: string }>,
    spare: { records: string[]; keys: Array<{ kid: string; json: string }> },
    run: Attempt,
  ): Promise<void> {
    this.ctx.ledger.requeueRecords(spare.records);
    this.ctx.ring.requeueKeys(spare.keys);
    await this.inTurn(() => this.parts.restore(writes.map((w) => w.name)));
    // A reset emptied this replica's journal: it is the store's again.
    if (run.clearStore) await this.mirror.reload().catch(() => {});
  }

  /**
   * Every REAP_EVERY_MS: a sync, so an emptied store is noticed (and written again) with no
   * request coming, and a reap.
   */
  private async tick(): Promise<void> {
    await this.sync().catch(() => {});
    await this.reaper.reap();
  }
}

/** The journal record of a run whose rule delays are waited for after its commit: its duration includes them. */
function withDelay(record: JournalRecord, delayMs: number): JournalRecord {
  return delayMs > 0 ? { ...record, durationMs: Math.round((record.durationMs + delayMs) * 1000) / 1000 } : record;
}
