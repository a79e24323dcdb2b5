import { randomBytes } from "node:crypto";
import type { SandboxError } from "../../core/errors.js";
import { exportSigningKey } from "../../core/signing-keys.js";
import type { CommitRequest, CommitResult, PartWrite, RunBasis, StateStore } from "../../core/state-store.js";
import type { SessionStore } from "../../control/sessions.js";
import type { SandboxContext } from "../context.js";
import { type Attempt, asUnavailable, type RunStart, withDelay } from "./attempt.js";
import { changedParts } from "./changed-parts.js";
import { commitKnown, isUnknownOutcome, tooManySessions } from "./commit-outcome.js";
import type { JournalMirror } from "./journal-mirror.js";
import { PRIVATE_PART_PREFIX, sessionOfPart, sessionPart } from "./part-names.js";
import type { KeyJson } from "./parts.js";
import type { ReplicaCopy } from "./replica-copy.js";
import type { Runs } from "./runs.js";
import { STATE_TIMEOUT_MS } from "./state-timings.js";

/**
 * A commit that reaches the store later than this is refused there: by then this replica is
 * settling it (see settle), and a commit that comes after its settling must not apply.
 */
const COMMIT_DEADLINE_MS = STATE_TIMEOUT_MS;

/** What committing a run works on. */
export interface RunCommitDeps {
  readonly store: StateStore;
  readonly ctx: SandboxContext;
  readonly sessions: SessionStore;
  readonly runs: Runs;
  readonly copy: ReplicaCopy;
  readonly mirror: JournalMirror;
  readonly keyJson: KeyJson;
  /** How long a lost answer is settled for (commitKnown's default when undefined). */
  readonly settleMs: number | undefined;
}

/**
 * How a run's commit ended: applied; refused as stale (the changes it lacked are applied: run it
 * again as it is); a conflict (sync, then run it again); or the refusal to answer.
 */
export type RunOutcome = "ok" | "stale" | "conflict" | SandboxError;

/**
 * A replica's commits: each with its own id, the epoch its objects are in, a deadline, and the
 * basis its answer was made on; and what follows each, the objects brought to what was stored.
 */
export class RunCommit {
  /** Commit ids: this replica's own prefix and a count, so no two commits anywhere share one. */
  private readonly origin = randomBytes(8).toString("hex");
  private commits = 0;
  /** Origins given to commits whose runs may have missed this replica's own changes. */
  private strangers = 0;
  /** Runs undone so far (their changes taken back from the objects). */
  private undone = 0;

  constructor(private readonly deps: RunCommitDeps) {}

  /** A commit request of this replica: a new id, the epoch its objects are in, and the deadline. */
  request(fields: Omit<CommitRequest, "id" | "epoch" | "deadlineMs">): CommitRequest {
    return { id: `${this.origin}:${++this.commits}`, epoch: this.deps.copy.epoch!, deadlineMs: Date.now() + COMMIT_DEADLINE_MS, ...fields };
  }

  /** Where a run that begins now begins (newAttempt). */
  startOf(): RunStart {
    const { copy, ctx, runs } = this.deps;
    return {
      basis: copy.cursor,
      missedAtStart: ctx.ledger.missed,
      behindAtStart: copy.syncedPastFailures,
      undoneAtStart: this.undone,
      lockTurnsAtStart: runs.lockTurns,
    };
  }

  /** Commits the run; on any end but "ok" its changes have left this replica's objects. */
  async commit(run: Attempt): Promise<RunOutcome> {
    const { ctx, copy, runs, sessions } = this.deps;
    if (await this.sawUndoneChanges(run)) {
      runs.takeIssued(run.journal?.tokenId);
      return "conflict";
    }
    let read: Record<string, number>;
    let writes: PartWrite[];
    try {
      ({ read, writes } = changedParts(run, ctx, copy.parts, this.deps.keyJson));
    } catch (e) {
      runs.release(run);
      throw e;
    }
    // A session made now joins the live ones (the store refuses one past --max-sessions) and
    // starts its idle time now: the store reaps only sessions it saw used.
    const made = writes.find((w) => w.json !== undefined && read[w.name] === 0 && sessionOfPart(w.name) !== undefined);
    const touched = run.touch !== undefined ? sessionPart(run.touch) : made?.name;
    const { records, keys, spare } = this.appended(run);
    // Nothing to store and nothing read (a control-plane read): no round trip.
    const appends = Object.keys(read).length + records.length + keys.length + run.events.length;
    if (appends === 0 && !run.journal && !touched && !run.clearStore) {
      runs.release(run);
      return "ok";
    }
    try {
      const result = await commitKnown(
        this.deps.store,
        this.request({
          read,
          writes,
          records,
          keys,
          ...(run.journal && { journal: JSON.stringify(withDelay(run.journal, run.delayMs)) }),
          events: run.events.map((e) => JSON.stringify(e)),
          ...(touched && { touch: { part: touched, atMs: Date.now() } }),
          ...(made && { admit: { part: made.name, max: sessions.limits.maxSessions } }),
          ...(run.clearStore && { clearLogs: true, clearParts: true }),
          basis: this.basis(run, read),
        }),
        this.deps.settleMs,
      );
      if (result.ok) {
        const logged = writes.length > 0 || records.length > 0 || keys.length > 0;
        copy.committed(writes, read, { position: result.position, logged, clearedParts: run.clearStore });
        if (result.changes) await copy.applyEpochChanges(result.changes);
        return "ok";
      }
      await this.undo(writes, spare, run);
      return await this.refusedOutcome(result);
    } catch (e) {
      // It may have applied all the same: from now on the objects are not answered from until a
      // sync (marked before the undo, so no run starts on what is being undone).
      copy.markBehind(run.basis);
      await this.undo(writes, spare, run);
      return isUnknownOutcome(e) ? e : asUnavailable(e, this.deps.store);
    } finally {
      runs.release(run);
    }
  }

  /** What the run of a refused commit does next, its changes undone already. */
  private async refusedOutcome(result: Exclude<CommitResult, { ok: true }>): Promise<RunOutcome> {
    if (result.reason === "stale") {
      if (result.changes === undefined) return "conflict";
      await this.deps.copy.applyEpochChanges(result.changes);
      return "stale";
    }
    if (result.reason === "conflict") return "conflict";
    if (result.reason === "full") return tooManySessions(this.deps.sessions.limits.maxSessions);
    return asUnavailable(undefined, this.deps.store);
  }

  /**
   * A run without the lock ran beside runs that held it, and may have read their changes: it waits
   * for them to end, and is run again (after a sync) if one was undone meanwhile, as its answer may
   * have been made from changes the store never held.
   */
  private async sawUndoneChanges(run: Attempt): Promise<boolean> {
    const { runs } = this.deps;
    if (run.release !== undefined || (run.lockTurnsAtStart !== -1 && runs.lockTurns === run.lockTurnsAtStart)) return false;
    await runs.lockedRunsDone();
    return this.undone !== run.undoneAtStart;
  }

  /**
   * What the run's answer was made from: the objects as of its start, the session parts it read
   * (those it may change, and its journal entry's session), and whether it missed a token's record.
   */
  private basis(run: Attempt, read: Readonly<Record<string, number>>): RunBasis {
    const { copy } = this.deps;
    const own = new Set([...(run.read?.keys() ?? []), ...Object.keys(read)]);
    if (run.journal?.session !== undefined) own.add(sessionPart(run.journal.session));
    return {
      cursor: run.basis,
      // A run under way when a commit of this replica's failed may have read what its undo took
      // back while the store kept it: nothing of this replica's own is taken as known to it (an
      // origin no commit ever had).
      origin: copy.failedCommits === run.behindAtStart ? this.origin : `${this.origin}-${++this.strangers}`,
      privatePrefix: PRIVATE_PART_PREFIX,
      ownParts: [...own].filter((name) => name.startsWith(PRIVATE_PART_PREFIX)),
      recordsRead: this.deps.ctx.ledger.missed !== run.missedAtStart,
    };
  }

  /** What the run's commit appends: its own tokens and keys, and any made outside a request (`spare`: taken back if it fails). */
  private appended(run: Attempt) {
    const { ctx, runs } = this.deps;
    const spare = { records: ctx.ledger.takeNewRecords(), keys: ctx.ring.takeNewKeys() };
    const issued = runs.takeIssued(run.journal?.tokenId);
    const records = [...(issued === undefined ? [] : [issued]), ...run.records, ...spare.records];
    const keys = [...run.keys.map((k) => ({ kid: k.kid, json: exportSigningKey(k) })), ...spare.keys];
    return { records, keys, spare };
  }

  /** A run whose commit failed: its changes leave this replica's objects too. */
  private async undo(
    writes: ReadonlyArray<{ name: string }>,
    spare: { records: string[]; keys: Array<{ kid: string; json: string }> },
    run: Attempt,
  ): Promise<void> {
    const { ctx, copy } = this.deps;
    this.undone++;
    ctx.ledger.requeueRecords(spare.records);
    ctx.ring.requeueKeys(spare.keys);
    // A reset ended every session here, not only those it wrote: all come back as stored.
    const names = writes.map((w) => w.name);
    await copy.restore(run.clearStore ? [...new Set([...names, ...copy.parts.sessionNames()])] : names);
    // A reset emptied this replica's journal: it is the store's again.
    if (run.clearStore) await this.deps.mirror.reload().catch(() => {});
  }
}
