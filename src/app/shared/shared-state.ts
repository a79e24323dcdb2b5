import { type SandboxError, StateUnavailable } from "../../core/errors.js";
import type { SandboxRequest, SandboxResponse } from "../../core/http-types.js";
import type { StateChanges, StateStore } from "../../core/state-store.js";
import type { Journal } from "../../control/journal.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { type FeedFollower, followFeed } from "./feed-follower.js";
import { keyExports, Runs } from "./runs.js";
import { ReplicaCopy } from "./replica-copy.js";
import { whatFailed } from "./open-state.js";
import type { SharedEventHub } from "./shared-events.js";
import { JournalMirror } from "./journal-mirror.js";
import { type Attempt, asUnavailable, newAttempt } from "./attempt.js";
import type { RunScope, SharedRun } from "./shared-run.js";
import { commitKnown } from "./commit-outcome.js";
import { DEFAULT_TIMINGS, type StateTimings } from "./state-timings.js";
import { RunCommit } from "./run-commit.js";
import { Reaper } from "./reaper.js";

/** Runs of one request that lost the race for the parts it changes before it is answered 503. */
const MAX_ATTEMPTS = 25;
/** Between two attempts to read the store of a replica that started before it could. */
const WAIT_RETRY_MS = 500;
/** What a replica's shared state works on: the store, and the sandbox's objects it keeps in step. */
export interface SharedStateDeps {
  readonly store: StateStore;
  readonly ctx: SandboxContext;
  readonly sessions: SessionStore;
  readonly hub: SharedEventHub;
  readonly journal: Journal;
  /** Sessions unused this long are reaped. */
  readonly idleMs: number;
  readonly timings?: StateTimings | undefined;
}

/**
 * A replica's side of the shared state (`--state`): before a request, the changes other replicas
 * made are applied to this replica's objects (`sync`); the request runs on them as in memory; then
 * its changes, journal entry and events are committed in one atomic call. A request that changes
 * state (a control-plane write, a scenario rule that may fire) holds this replica's lock and
 * commits only if the parts it read are still as it read them; else it is undone and run again.
 * Every other request commits its journal entry (and the tokens it issued) unconditionally.
 */
export class SharedState {
  /** The request runs under way, and what each collects for its commit. */
  readonly runs = new Runs();
  private readonly mirror: JournalMirror;
  private readonly commits: RunCommit;
  private follower: FeedFollower | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;
  /** Why this replica does not serve yet: it started before its store could be read (beginWhenReachable). */
  private waiting: StateUnavailable | undefined;
  private waitTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private readonly reaper: Reaper;
  /** Where this replica's objects stand against the store (cursor, epoch, parts), and how they are brought to it. */
  private readonly copy: ReplicaCopy;

  readonly store: StateStore;
  private readonly timings: StateTimings;

  constructor(deps: SharedStateDeps) {
    const { store, ctx, sessions, journal } = deps;
    this.store = store;
    this.timings = deps.timings ?? DEFAULT_TIMINGS;
    const keyJson = keyExports(ctx.ring);
    this.mirror = new JournalMirror(store, journal, deps.hub, sessions);
    this.copy = new ReplicaCopy(
      { store, ctx, sessions, journal, keyJson, runs: this.runs },
      {
        reloadJournal: () => (this.follower === undefined ? Promise.resolve() : this.mirror.reload()),
        catchUpJournal: () => this.follower?.catchUp() ?? Promise.resolve(),
        noticeMs: this.timings.noticeMs,
      },
    );
    this.commits = new RunCommit({
      store,
      ctx,
      sessions,
      runs: this.runs,
      copy: this.copy,
      mirror: this.mirror,
      keyJson,
      settleMs: this.timings.settleMs,
    });
    this.reaper = new Reaper({
      store,
      runs: this.runs,
      sessions,
      parts: this.copy.parts,
      idleMs: deps.idleMs,
      commitEvents: (events) => commitKnown(store, this.commits.request({ read: {}, writes: [], records: [], keys: [], events })),
    });
  }

  /**
   * Applies the store's state as this replica starts (`first`: the sync made before the
   * scenarios, for the keys), or seeds an empty store with this replica's, then loads the journal
   * and starts following the feed.
   */
  async begin(first: StateChanges): Promise<void> {
    await this.copy.seedOrAdopt(first);
    // The feed's end first, then the journal: a request committed in between is in both, and
    // kept once (by its number), rather than in neither.
    // Again after a begin that failed halfway (a replica waiting for its store): one follower.
    this.follower ??= await followFeed(this.store, (entries) => this.mirror.fromFeed(entries));
    await this.mirror.reload();
    if (this.ticker === undefined) {
      this.ticker = setInterval(() => void this.tick(), this.timings.tickMs);
      this.ticker.unref?.();
    }
  }

  /**
   * The store could not be read at start (`why`): every request is answered 503 until it can,
   * then the replica begins as it would have at start. `notice` tells the operator, once when
   * waiting and once when serving.
   */
  beginWhenReachable(why: StateUnavailable, notice: (message: string) => void): void {
    this.waiting = why;
    notice(
      `${whatFailed(why)} This replica answers 503 state_unavailable, health too, and serves once the shared state at ${this.store.shownAs} can be read.`,
    );
    const attempt = async () => {
      this.waitTimer = undefined;
      if (this.closed) return;
      try {
        await this.begin(await this.store.sync(""));
        this.waiting = undefined;
        notice(`The shared state at ${this.store.shownAs} can be read now: this replica serves.`);
      } catch (e) {
        if (e instanceof StateUnavailable) this.waiting = e;
        if (!this.closed) this.waitTimer = setTimeout(() => void attempt(), WAIT_RETRY_MS);
      }
    };
    this.waitTimer = setTimeout(() => void attempt(), WAIT_RETRY_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.waitTimer) clearTimeout(this.waitTimer);
    if (this.ticker) clearInterval(this.ticker);
    this.follower?.stop();
    await this.store.close();
    await this.follower?.done;
  }

  /** The request handler over the in-memory pipeline `inner`; `unavailable` answers a refusal of the shared state's. */
  wrap(
    inner: (request: SandboxRequest, run?: SharedRun) => Promise<SandboxResponse>,
    unavailable: (error: SandboxError, request: SandboxRequest) => SandboxResponse,
  ) {
    return async (request: SandboxRequest): Promise<SandboxResponse> => {
      const waiting = this.waiting;
      if (waiting) return unavailable(asUnavailable(waiting, this.store, request.path === "/__sandbox/health"), request);
      if (request.path === "/__sandbox/health") return this.health(request, inner, unavailable);
      // The control plane reads the whole state, and the journal: brought to the store's first.
      // A request of the merchant API runs on the objects as they are, its commit checking that
      // nothing it read changed since (RunBasis): one round trip.
      const control = request.path.startsWith("/__sandbox/");
      let fresh = control || !this.copy.current;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (fresh) {
          try {
            await this.sync();
            if (control) await this.follower?.catchUp();
          } catch (e) {
            return unavailable(asUnavailable(e, this.store), request);
          }
        }
        const run = newAttempt(this.commits.startOf());
        let response: SandboxResponse;
        try {
          response = await inner(request, this.handOver(run));
        } catch (e) {
          this.runs.release(run);
          throw e;
        }
        const outcome = await this.commits.commit(run);
        if (outcome === "ok") {
          if (run.delayMs > 0) await this.runs.sleep(run.delayMs);
          run.logged?.(undefined);
          return response;
        }
        response.stream?.cancel();
        if (outcome === "stale") {
          // What it lacked is applied now: run again on the objects as they are.
          fresh = control || !this.copy.current;
          continue;
        }
        if (outcome !== "conflict") {
          if (outcome instanceof StateUnavailable) run.logged?.(outcome);
          return unavailable(outcome, request);
        }
        fresh = true;
      }
      const busy = new StateUnavailable(
        `This request lost the race for the state it changes ${MAX_ATTEMPTS} times in a row: other requests change the same session at the same time. Retry it.`,
      );
      return unavailable(busy, request);
    };
  }

  /** Healthy only when this replica can read the shared state and apply it, not just reach the store. */
  private async health(
    request: SandboxRequest,
    inner: (request: SandboxRequest) => Promise<SandboxResponse>,
    unavailable: (error: SandboxError, request: SandboxRequest) => SandboxResponse,
  ): Promise<SandboxResponse> {
    try {
      await this.sync();
    } catch (e) {
      return unavailable(asUnavailable(e, this.store, true), request);
    }
    return inner(request);
  }

  /** What the pipeline is handed with the request: its run, to tell of what the run does. */
  private handOver(run: Attempt): SharedRun {
    return {
      exclusive: (scope) => this.exclusive(run, scope),
      journalRecord: (record) => {
        run.journal = record;
      },
      touch: (session) => {
        run.touch = session;
      },
      whenCommitted: (log) => {
        run.logged = log;
      },
    };
  }

  /**
   * The run will change state, the parts `scope` names: it waits for this replica's other such
   * runs, and its commit applies only if the parts it changes (and the one its answer depends on)
   * are still as they are now.
   */
  private async exclusive(run: Attempt, scope: RunScope): Promise<void> {
    if (run.release) return;
    run.release = await this.runs.acquire();
    this.runs.hold(run);
    run.sessionsComeAndGo = scope.sessionsComeAndGo;
    run.dependsOn = scope.dependsOn;
    run.read = new Map(scope.parts.map((name) => [name, this.copy.parts.version(name)]));
  }

  /** The whole sandbox was reset (a control-plane write, under the lock): the journal and the feed start again on every replica. */
  clearAfterCommit(): void {
    const run = this.runs.holder;
    if (run) run.clearStore = true;
  }

  /** Applies what other replicas changed since the last sync; concurrent callers share one. */
  sync(): Promise<void> {
    return this.copy.sync();
  }

  /**
   * Every tick: a sync, so an emptied store is noticed (and written again) with no
   * request coming, and a reap.
   */
  private async tick(): Promise<void> {
    await this.sync().catch(() => {});
    await this.reaper.reap();
  }
}
