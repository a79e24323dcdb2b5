/**
 * Where a sandbox keeps the state its replicas share (`serve --state redis://…`,
 * `createSandbox({ state })`). Without one, a sandbox's state is its own objects in memory and
 * nothing here is used.
 *
 * The store is coarse: a request costs at most two calls, each atomic and one round trip.
 *
 * - `sync(cursor)`: what changed since the replica last looked: parts (the serialized state of the
 *   sandbox's own scenarios, of each session, of the token ledger's revocations), ended sessions,
 *   issued-token records and signing keys. A replica applies it to its objects before it reads
 *   them, so no answer is made from state older than the request.
 * - `commit(…)`: the request's writes, all or nothing: parts written (only if every part it read
 *   is still at the version it read: else `conflict`, and the replica syncs and runs the request
 *   again), records and keys appended, its journal entry and events appended, its session's use
 *   noted. A commit that reaches the store after its deadline is refused (`late`) with nothing
 *   applied: the replica has answered 503 by then, and the journal must not hold what no client saw.
 *
 * Parts are JSON text the store never parses; versions count a part's writes from 1.
 */

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
   * True when the cursor was older than the change log keeps: `parts` is then every part there is,
   * and a part the replica holds that is not among them is gone.
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
  /** A session used by this request: its idle time starts again (wall-clock ms). */
  readonly touch?: { readonly session: string; readonly atMs: number };
  /** Wall-clock ms after which the commit must not apply. */
  readonly deadlineMs: number;
}

export type CommitResult =
  /** Applied. `seq`: the journal entry's number (`req_<seq>`), when one was given. */
  { readonly ok: true; readonly seq: number | undefined } | { readonly ok: false; readonly reason: "conflict" | "late" };

/** One entry of the feed every replica's event streams read: requests journaled and events, in commit order. */
export interface FeedEntry {
  /** Its position in the feed, increasing. */
  readonly id: string;
  /** The journal entry's number for a request; undefined for an event. */
  readonly seq: number | undefined;
  /** A journal record (JSON, without id) or an event (JSON). */
  readonly json: string;
}

export interface StateStore {
  /** Where the state is, for messages: a password in it is redacted. */
  readonly shownAs: string;
  sync(cursor: StateCursor): Promise<StateChanges>;
  commit(request: CommitRequest): Promise<CommitResult>;
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
   * Ends sessions unused since before `idleBeforeMs` (wall clock): their parts are removed, as if
   * committed. Returns their ids.
   */
  reap(idleBeforeMs: number, limit: number): Promise<string[]>;
  /** The last use of each live session (wall-clock ms), for `expires_at`. */
  lastUse(sessions: readonly string[]): Promise<Array<number | undefined>>;
  /** Resolves when the store answers; rejects (StateUnavailable) when it does not in time. */
  ping(): Promise<void>;
  /** Everything gone: parts, logs, journal, feed (POST /__sandbox/reset on any replica). */
  clear(): Promise<void>;
  close(): Promise<void>;
}
