import type { EpochChanges, PartWrite, StateChanges, StateCursor, StateStore } from "../../core/state-store.js";
import type { Journal } from "../../control/journal.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { coalesced } from "./coalesced.js";
import type { KeyJson } from "./parts.js";
import { snapshot } from "./reseed.js";
import type { Runs } from "./runs.js";
import { StoredParts } from "./stored-parts.js";

/** Notice periods one sync waits out at most (each new state written back starts one). */
const MAX_NOTICE_WAITS = 4;
/** How many reseeds back a replica remembers where its epochs came from. */
const ANCESTRY_KEPT = 16;

/** The store and the objects of the replica that are kept in step with it. */
export interface ReplicaObjects {
  readonly store: StateStore;
  readonly ctx: SandboxContext;
  readonly sessions: SessionStore;
  readonly journal: Journal;
  readonly keyJson: KeyJson;
  readonly runs: Runs;
}

/**
 * Where a replica's objects stand against its store, and the three ways they are brought to it: a
 * sync's changes applied, a failed run's changes undone, and a store in another epoch (emptied, or
 * reseeded) either written back from these objects or adopted.
 */
export class ReplicaCopy {
  private cursor_ = "";
  /** The store's epoch the objects were last brought to; undefined before the first. */
  epoch: string | undefined;
  /** The lineage of the state the objects hold (see StateChanges.lineage). */
  private lineage: string | undefined;
  /** How far into `epoch` the objects go: the highest position synced or committed. */
  private position = 0;
  /** Where the epoch the objects are in came from (see Reseed.ancestry). */
  private ancestry: string[] = [];
  /** Until when (wall-clock ms) a state written back is not answered from (see sync). */
  private settlesAt = 0;
  /** Each part as last synced or committed: its version and JSON. */
  readonly parts: StoredParts;
  /** Failed commits (markBehind), and how many of them the last sync came after. */
  private behindMarks = 0;
  private syncedMarks = 0;
  /** Reading parts into the objects (a sync's, an undo's): one at a time. */
  private turn: Promise<void> = Promise.resolve();

  private readonly store: StateStore;

  constructor(
    private readonly objects: ReplicaObjects,
    private readonly hooks: {
      /** After a full answer: the journal is read again. */
      readonly reloadJournal: () => Promise<void>;
      /** Before a reseed: the journal takes in what the feed holds (requests answered on a state that is replaced). */
      readonly catchUpJournal: () => Promise<void>;
      /** How long every replica has to notice an emptied store and offer its state (see sync). */
      readonly noticeMs: number;
    },
  ) {
    this.store = objects.store;
    this.parts = new StoredParts(objects.ctx, objects.sessions);
  }

  /**
   * The store's state as the replica starts: adopted, or, in a store nothing was seeded in, this
   * replica's own written there (unless another replica starting at once seeded first).
   */
  async seedOrAdopt(first: StateChanges): Promise<void> {
    if (first.lineage !== undefined) return this.apply(first);
    this.lineage = first.epoch;
    if (!(await this.reseed())) await this.apply(await this.store.sync(""));
  }

  /**
   * Applies what other replicas changed since the last sync; concurrent callers share one. A state
   * written back into a store that lost its data is not answered from until every replica had
   * the time to offer its own (`noticeMs`): the one that saw most wins before anyone answers.
   */
  readonly sync = coalesced(async () => {
    const marked = this.behindMarks;
    try {
      await this.apply(await this.store.sync(this.cursor_));
    } catch (e) {
      // A store that does not answer a sync would not answer a commit either: requests sync
      // first (and are refused at once, having changed nothing) until one succeeds.
      this.markBehind();
      throw e;
    }
    this.syncedMarks = marked;
    // Again while a state written back (another, if one was taken meanwhile) is still settling.
    for (let waits = 0; waits < MAX_NOTICE_WAITS; waits++) {
      const settling = this.settlesAt - Date.now();
      if (settling <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, settling));
      await this.apply(await this.store.sync(this.cursor_));
    }
  });

  /** Where the objects stand: every change up to it is in them (a commit's basis). */
  get cursor(): StateCursor {
    return this.cursor_;
  }

  /**
   * Whether a request may run on the objects as they are, its commit checking that nothing it
   * read changed since (RunBasis): not before the first sync, nor while a state written back is
   * settling (see sync).
   */
  get current(): boolean {
    return this.epoch !== undefined && this.cursor_ !== "" && this.syncedMarks === this.behindMarks && Date.now() >= this.settlesAt;
  }

  /**
   * A commit of this replica's failed, perhaps after it applied (its outcome unknown), its run
   * having begun at `basis`: the store may hold a change of this replica's own that its objects do
   * not, which no commit's check would see as news. No request runs on the objects as they are
   * until a sync, and that sync starts from the basis at the latest: a commit answered meanwhile
   * may have moved the cursor past the change while the objects still held it.
   */
  markBehind(basis?: StateCursor): void {
    this.behindMarks++;
    const at = basis === undefined ? undefined : /^(\d+):(\d+)$/.exec(basis);
    if (at && at[1] === this.epoch && Number(at[2]) < this.position) {
      this.cursor_ = basis!;
      this.position = Number(at[2]);
    }
  }

  /** How many commits of this replica's have failed (markBehind). */
  get failedCommits(): number {
    return this.behindMarks;
  }

  /**
   * How many of them the objects were last brought past by a sync: a run that began on objects
   * of fewer than `failedCommits` when it commits may have read what an undo took back.
   */
  get syncedPastFailures(): number {
    return this.syncedMarks;
  }

  /**
   * Changes a commit answered with (other replicas', since the run's basis): applied as a sync's,
   * in turn; the cursor only moves on (answers to commits made at once may come in any order).
   */
  async applyEpochChanges(changes: EpochChanges): Promise<void> {
    const empty = changes.parts.length + changes.removed.length + changes.records.length + changes.keys.length === 0;
    // Nothing to read into the objects (the steady state of one replica): no turn to wait for.
    if (empty) return this.movedTo(changes);
    await this.inTurn(async () => {
      if (!this.movesOn(changes)) return;
      await this.parts.apply({ ...changes, full: false });
      this.movedTo(changes);
    });
  }

  /** Whether `changes` are of the epoch the objects are in, and go at least as far as they do. */
  private movesOn(changes: EpochChanges): boolean {
    return this.epoch !== undefined && changes.cursor.startsWith(`${this.epoch}:`) && changes.position >= this.position;
  }

  private movedTo(changes: EpochChanges): void {
    if (!this.movesOn(changes)) return;
    this.position = changes.position;
    this.cursor_ = changes.cursor;
  }

  /** A commit of this replica's was applied: its parts are stored as written (and, `clearedParts`, no other). */
  committed(
    writes: readonly PartWrite[],
    read: Readonly<Record<string, number>>,
    commit: { position: number; logged: boolean; clearedParts: boolean },
  ): void {
    // The position counts what the objects hold: a commit's own change counts only when it comes
    // right after the changes they hold (a later position may be other replicas' changes, not seen).
    if (commit.logged && commit.position === this.position + 1) this.position = commit.position;
    const clearedParts = commit.clearedParts;
    if (clearedParts) this.parts.keepOnly(new Set(writes.map((w) => w.name)));
    // A removal stands at the version after the one read, as a write would: a later one kept meanwhile wins.
    for (const w of writes) this.parts.committed(w.name, read[w.name]! + 1, w.json);
  }

  /** The named parts back to how they are stored (a run whose commit failed changed them). */
  restore(names: readonly string[]): Promise<void> {
    return this.inTurn(() => this.parts.restore(names));
  }

  /**
   * Another replica's changes reach the objects outside any request's collecting, one batch at a
   * time, in turn with undoing failed runs (both read parts into the objects). A store in another
   * epoch than the objects are in lost its data, or was reseeded: see newEpoch.
   */
  private async apply(changes: StateChanges): Promise<void> {
    if (this.epoch !== undefined && changes.epoch !== this.epoch) {
      const adopted = await this.newEpoch(changes);
      if (adopted === undefined) return;
      changes = adopted;
    }
    await this.inTurn(() => this.parts.apply(changes));
    // Syncs run one at a time, so each starts where the last one ended (cursors are the store's own).
    this.cursor_ = changes.cursor;
    if (changes.epoch !== this.epoch) {
      this.position = 0;
      this.ancestry = [...changes.ancestry];
      if (changes.reseededMsAgo !== undefined) this.settlesAt = Date.now() + this.hooks.noticeMs - changes.reseededMsAgo;
    }
    this.position = Math.max(this.position, changes.position);
    this.epoch = changes.epoch;
    this.lineage = changes.lineage ?? this.lineage;
    // A full answer: another epoch, or this replica was away longer than the store keeps changes.
    if (changes.full) await this.hooks.reloadJournal();
  }

  /**
   * The store is not in the epoch the objects are in. When it holds the state of an older
   * deployment, that state is adopted (the changes to apply). Otherwise this replica offers its
   * own state (reseed): the store takes it when it is emptied, seeded by a replica started since
   * (a younger lineage), or reseeded from this replica's epoch by one that had seen less of it;
   * then there is nothing to apply (undefined). Else the store's state is adopted.
   */
  private async newEpoch(changes: StateChanges): Promise<StateChanges | undefined> {
    const stored = changes.lineage;
    if (stored !== undefined && BigInt(stored) < BigInt(this.lineage!)) return changes;
    await this.hooks.catchUpJournal().catch(() => {});
    if (await this.reseed()) return undefined;
    // Another replica's state was taken: it is adopted.
    return this.store.sync("");
  }

  /** Writes the objects' whole state into the store; false when the store refused (see newEpoch). */
  private async reseed(): Promise<boolean> {
    // Under the lock: no run is halfway through its changes, so the state written is committed state.
    const release = await this.objects.runs.acquire();
    try {
      const from = { lineage: this.lineage!, fromEpoch: this.epoch ?? "", position: this.position, ancestry: this.ancestry };
      const state = snapshot(this.objects, from);
      const result = await this.store.reseed(state);
      if (!result.ok) return false;
      this.parts.reseeded(state.parts);
      this.cursor_ = result.cursor;
      this.ancestry = [`${from.fromEpoch}:${from.position}`, ...from.ancestry].slice(0, ANCESTRY_KEPT);
      if (from.fromEpoch !== "") this.settlesAt = Date.now() + this.hooks.noticeMs;
      this.epoch = result.epoch;
      return true;
    } finally {
      release();
    }
  }

  private inTurn(work: () => Promise<void>): Promise<void> {
    const run = this.turn.then(work);
    this.turn = run.catch(() => {});
    return run;
  }
}
