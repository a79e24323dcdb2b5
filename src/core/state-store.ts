/**
 * Where a sandbox keeps the state its replicas share (`serve --state redis://…`,
 * `createSandbox({ state })`). Without one, a sandbox's state is its own objects in memory and
 * nothing here is used.
 *
 * The store is coarse: a request of a replica in step costs one commit, atomic, whose answer
 * brings what other replicas changed (RunBasis); a sync, atomic too, only when the replica is not
 * in step or must read the whole state (the control plane); `settle` only after a commit whose
 * answer was lost.
 *
 * - `sync(cursor)`: what changed since the replica last looked: parts (the serialized state of the
 *   sandbox's own scenarios, of each session, of the token ledger's revocations), ended sessions,
 *   issued-token records and signing keys. A replica applies it to its objects; a commit's basis
 *   makes sure no answer is made from state older than the request.
 * - `commit(…)`: the request's writes, all or nothing: parts written (only if every part it read
 *   is still at the version it read, and the store is still in the epoch it read them in: else
 *   `conflict`, and the replica syncs and runs the request again), records and keys appended, its
 *   journal entry and events appended, its session's use noted. A commit that reaches the store
 *   after its deadline is refused (`late`) with nothing applied.
 * - `settle(id)`: a commit whose answer never came is either applied (its result) or, from now
 *   on, never will be. A replica answers its client only once it knows which.
 * - `reseed(…)`: a store that lost its data (a new epoch) is written whole from a replica that
 *   still holds the state, unless state of an older lineage is there already, or of the same
 *   lineage that went at least as far into the newest epoch both went through (Reseed.ancestry).
 *
 * Parts are JSON text the store never parses; versions count a part's writes from 1. The store
 * knows nothing of what a part is: a commit says which parts are live sessions (`touch`, `admit`).
 */

/**
 * How long a store keeps a commit's outcome after it ran, at the least: `settle` must be asked
 * within it. Short, as a flood of requests leaves one outcome per request for this long.
 */
export const COMMIT_OUTCOME_KEPT_MS = 10_000;

/** A position in the store's change log; "" before anything was read. */
export type StateCursor = string;

/** One part's content as stored, with its version. */
export interface StoredPart {
  readonly name: string;
  readonly version: number;
  readonly json: string;
}

export interface StateChanges {
  /** Where the next sync starts. */
  readonly cursor: StateCursor;
  /**
   * The store's epoch: made when the store is first written, and anew when it lost its data (a
   * Redis restarted without persistence) or was reseeded. A replica that held another epoch knows
   * the store's state is not the one it built on.
   */
  readonly epoch: string;
  /**
   * Which deployment's state the store holds: the epoch in which that state was first seeded, as
   * a reseed keeps it; undefined while nothing was seeded (a new or emptied store).
   */
  readonly lineage: string | undefined;
  /** The number of the epoch's last change (a reseed starts it at the reseeding replica's position). */
  readonly position: number;
  /**
   * Where this epoch's state came from, newest first ("<epoch>:<position>" each: the state was
   * that far into that epoch when it was reseeded); empty for an epoch seeded fresh.
   */
  readonly ancestry: readonly string[];
  /**
   * How long ago (ms, the store's clock) the epoch's state was written back from a replica's, when
   * it was (a store that lost its data); undefined for an epoch seeded fresh.
   */
  readonly reseededMsAgo: number | undefined;
  /**
   * True when the cursor was older than the change log keeps, or of another epoch: `parts` is then
   * every part there is, and a part the replica holds that is not among them is gone.
   */
  readonly full: boolean;
  /** Parts changed since the cursor, each at its latest version (once, however often it changed). */
  readonly parts: readonly StoredPart[];
  /** Parts removed since the cursor (an ended session's). */
  readonly removed: readonly string[];
  /** Records appended since the cursor, oldest first (issued tokens: JSON). */
  readonly records: readonly string[];
  /** Keys appended since the cursor, oldest first (JSON). With `full`, every key there is. */
  readonly keys: readonly string[];
}

export interface PartWrite {
  readonly name: string;
  /** The new content; undefined removes the part. */
  readonly json: string | undefined;
}

export interface CommitRequest {
  /**
   * This commit's own id (1 to 64 of A-Z a-z 0-9 : _ -), never used for another: the store
   * remembers the outcome by it for a while, for `settle`.
   */
  readonly id: string;
  /** The epoch the request read its parts in; another epoch now is a conflict. */
  readonly epoch: string;
  /**
   * The parts the request read, at the versions it read them (0: it did not exist). The commit
   * applies only if each is still at that version.
   */
  readonly read: Readonly<Record<string, number>>;
  /** Parts written or removed; each must be among `read`. */
  readonly writes: readonly PartWrite[];
  /** Appended to the record log (issued tokens), JSON each. */
  readonly records: readonly string[];
  /** Appended to the key log (signing keys made), JSON each; a key already stored is kept. */
  readonly keys: ReadonlyArray<{ readonly kid: string; readonly json: string }>;
  /** The request's journal record (JSON without its id): the store numbers it. */
  readonly journal?: string;
  /** Events for the streams of every replica (JSON each), after the journal entry. */
  readonly events: readonly string[];
  /** A live session's part was used by this request: its idle time starts again (wall-clock ms). */
  readonly touch?: { readonly part: string; readonly atMs: number };
  /**
   * A new session's part joins the live sessions, unless `max` are live already: the commit is
   * then refused (`full`) with nothing applied. Its idle time starts at `touch`'s time.
   */
  readonly admit?: { readonly part: string; readonly max: number };
  /** The journal, the change log's records and the feed emptied after the writes (a reset). */
  readonly clearLogs?: boolean;
  /**
   * Every part this commit does not write is removed, and every live session ended (a reset):
   * with `clearLogs` only, as replicas learn of it from the full sync that follows.
   */
  readonly clearParts?: boolean;
  /** Wall-clock ms after which the commit must not apply. */
  readonly deadlineMs: number;
  /**
   * What else the request's answer was made from, besides the parts in `read`: the replica's
   * objects as of `basis.cursor`. With a basis, the commit applies only if no other replica's
   * change since that cursor is news to the request (RunBasis), and its result carries the
   * changes since then, so the replica need not sync before its next request.
   */
  readonly basis?: RunBasis;
}

/**
 * The state a request was answered from: the replica's objects as of `cursor`, with every change
 * of `origin`'s own since. Another origin's change since the cursor is news to the request, and
 * the commit is refused `stale`, unless it only wrote parts whose names start with `privatePrefix`
 * (one session's each) other than `ownParts`: a request reads no session's state but its own. A
 * part made or removed under the prefix is always news (a request may name a session that is
 * not yet, or no longer, known to it), and so is a key appended; a record appended only when
 * `recordsRead` (the request looked for an issued token's record and did not find it).
 */
export interface RunBasis {
  readonly cursor: StateCursor;
  /** The replica committing (1 to 64 of A-Z a-z 0-9 _ -): its own changes are in its objects. */
  readonly origin: string;
  readonly privatePrefix: string;
  readonly ownParts: readonly string[];
  readonly recordsRead: boolean;
}

/**
 * Applied: `seq` is the journal entry's number (`req_<seq>`), when one was given, and `position`
 * the epoch's position after it (StateChanges.position); with a basis, `changes` are other
 * origins' changes since its cursor, up to that position (the origin's own are in its objects).
 * Or refused, with nothing applied.
 */
export type CommitResult =
  | { readonly ok: true; readonly seq: number | undefined; readonly position: number; readonly changes?: EpochChanges }
  | { readonly ok: false; readonly reason: "conflict" | "late" | "full" }
  | StaleCommit;

/**
 * Refused with nothing applied: another replica changed what the request's answer was made from
 * since its basis. `changes` are other origins' changes since the basis's cursor, to apply before
 * the request runs again; undefined when the store no longer keeps changes that old (sync in full).
 */
export interface StaleCommit {
  readonly ok: false;
  readonly reason: "stale";
  readonly changes: EpochChanges | undefined;
}

/** Changes within the epoch a replica is in, as a commit answers them (see RunBasis): never in full. */
export type EpochChanges = Pick<StateChanges, "cursor" | "position" | "parts" | "removed" | "records" | "keys">;

/** What `settle` found: the commit applied (its journal number and the position after it), or not, and now never. */
export type SettleResult = { readonly applied: true; readonly seq: number | undefined; readonly position: number } | { readonly applied: false };

/** A whole state written into a store that lost its data (see `reseed`). */
export interface Reseed {
  /** The lineage the state descends from (StateChanges.lineage as the replica knew it). */
  readonly lineage: string;
  /** The epoch whose state the replica holds (the one the store lost). */
  readonly fromEpoch: string;
  /**
   * How far into that epoch the replica's state goes (the highest position it synced or
   * committed): of two replicas that held the same epoch, the one that saw more seeds the store.
   */
  readonly position: number;
  /**
   * Where the replica's epoch came from (StateChanges.ancestry as the replica knew it). Of two
   * states of one lineage, the one further into the newest epoch both went through wins.
   */
  readonly ancestry: readonly string[];
  readonly parts: ReadonlyArray<{ readonly name: string; readonly json: string }>;
  readonly keys: ReadonlyArray<{ readonly kid: string; readonly json: string }>;
  /** The journal as the replica holds it, oldest first, with its numbers. */
  readonly journal: ReadonlyArray<{ readonly seq: number; readonly json: string }>;
  /** The last journal number given out: numbering goes on after it. */
  readonly journalSeq: number;
  /** The live sessions' parts and their last use (wall-clock ms). */
  readonly live: ReadonlyArray<{ readonly part: string; readonly atMs: number }>;
}

/** A reseed applied (the store's new cursor, every part at version 1), or refused (see `reseed`). */
export type ReseedResult = { readonly ok: true; readonly cursor: StateCursor; readonly epoch: string } | { readonly ok: false };

/** One entry of the feed every replica's event streams read: requests journaled and events, in commit order. */
export interface FeedEntry {
  /** Its position in the feed, increasing, also across an emptied store ("<ms>-<n>"). */
  readonly id: string;
  /** The journal entry's number for a request; undefined for an event. */
  readonly seq: number | undefined;
  /** A journal record (JSON, without id) or an event (JSON). */
  readonly json: string;
}

/** Which of two feed positions comes later ("<ms>-<n>" each; "" is before everything): <0, 0 or >0. */
export function compareFeedIds(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "") return -1;
  if (b === "") return 1;
  const [a1 = 0, a2 = 0] = a.split("-").map(Number);
  const [b1 = 0, b2 = 0] = b.split("-").map(Number);
  return a1 !== b1 ? a1 - b1 : a2 - b2;
}

export interface StateStore {
  /** Where the state is, for messages: a password in it is redacted. */
  readonly shownAs: string;
  sync(cursor: StateCursor): Promise<StateChanges>;
  commit(request: CommitRequest): Promise<CommitResult>;
  /**
   * The outcome of the commit `id` whose answer was lost: applied, or not and never (a commit
   * `id` that comes later is refused). Waits up to `waitMs` for the store's answer.
   */
  settle(id: string, waitMs: number): Promise<SettleResult>;
  reseed(state: Reseed): Promise<ReseedResult>;
  /**
   * Feed entries after `after` ("" for the oldest kept), at most `limit`, oldest first. With
   * `waitMs`, waits up to that long for one when there is none yet.
   */
  feed(after: string, limit: number, waitMs?: number): Promise<FeedEntry[]>;
  /**
   * The journal records kept, oldest first, at most the journal's size: what a replica reads at
   * start to know the requests made before it.
   */
  journal(): Promise<Array<{ seq: number; json: string }>>;
  /**
   * Ends the live sessions unused since before `idleBeforeMs` (wall clock): their parts are
   * removed, as if committed. Returns their parts' names.
   */
  reap(idleBeforeMs: number, limit: number): Promise<string[]>;
  close(): Promise<void>;
}
