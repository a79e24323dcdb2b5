import type { CommitRequest, Reseed, RunBasis } from "../core/state-store.js";

/**
 * The most parts, records and keys one commit may carry together. The Redis store logs them in one
 * stream entry built by a Lua `unpack`, which has a fixed ceiling on its results; a commit over it
 * would fail half-applied, so both stores refuse it before it starts.
 */
export const MAX_COMMIT_ITEMS = 2000;

/**
 * The checks both stores make of a commit before it goes anywhere: a write of a part the request
 * did not read could not be checked against a version, so it would overwrite what another replica
 * wrote in between. That is a bug in the caller, never the store's to answer as a conflict.
 */
export function checkCommit(request: CommitRequest): void {
  const items = request.writes.length + request.records.length + request.keys.length;
  if (items > MAX_COMMIT_ITEMS) {
    throw new TypeError(
      `A commit writes ${items} parts, records and keys together, over the ${MAX_COMMIT_ITEMS} one commit may carry: split the work into several requests.`,
    );
  }
  for (const [name, version] of Object.entries(request.read)) {
    if (!Number.isSafeInteger(version) || version < 0) {
      throw new TypeError(`A commit read part "${name}" at version ${String(version)}: give the version read, 0 when it did not exist.`);
    }
  }
  const written = new Set<string>();
  for (const write of request.writes) {
    if (!Object.hasOwn(request.read, write.name)) {
      throw new TypeError(
        `A commit writes part "${write.name}" without having read it: add it to \`read\` with the version read (0 when it did not exist), so a concurrent write is seen as a conflict.`,
      );
    }
    if (written.has(write.name)) {
      throw new TypeError(`A commit writes part "${write.name}" twice: write each part once, with its final content.`);
    }
    written.add(write.name);
  }
  checkCommitId(request.id);
  if (request.clearParts && !request.clearLogs) {
    throw new TypeError("A commit that clears the parts must clear the logs too (clearLogs): replicas learn of it from the full sync that follows.");
  }
  if (typeof request.epoch !== "string" || request.epoch === "") {
    throw new TypeError("A commit's epoch is empty: give the epoch of the sync the request read its parts in (StateChanges.epoch).");
  }
  if (request.admit && (request.admit.part === "" || !Number.isSafeInteger(request.admit.max) || request.admit.max < 1)) {
    throw new TypeError("A commit's admit needs the new session's part and max, the most live sessions (a whole number, 1 or more).");
  }
  if (request.admit && !request.touch) {
    throw new TypeError("A commit that admits a session needs a touch of it too: its idle time starts then.");
  }
  if (!Number.isFinite(request.deadlineMs)) {
    throw new TypeError(`A commit's deadlineMs is ${String(request.deadlineMs)}: give the wall-clock time (ms) after which it must not apply.`);
  }
  if (request.touch && (!Number.isFinite(request.touch.atMs) || request.touch.part === "")) {
    throw new TypeError("A commit's touch needs a live session's part and a wall-clock time in ms (atMs).");
  }
  if (request.basis) checkBasis(request.basis);
}

function checkBasis(basis: RunBasis): void {
  if (typeof basis.cursor !== "string") {
    throw new TypeError("A commit's basis has no cursor: give the StateChanges.cursor the replica's objects were last brought to.");
  }
  if (typeof basis.origin !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(basis.origin)) {
    throw new TypeError(
      `A commit's basis.origin is ${JSON.stringify(basis.origin)}: give 1 to 64 of A-Z a-z 0-9 _ -, the same for every commit of a replica.`,
    );
  }
  if (typeof basis.privatePrefix !== "string" || basis.privatePrefix === "") {
    throw new TypeError(
      "A commit's basis.privatePrefix is empty: give the prefix of the parts a request reads only when it names them (a session's).",
    );
  }
  if (!Array.isArray(basis.ownParts) || basis.ownParts.length > MAX_COMMIT_ITEMS || !basis.ownParts.every((p) => typeof p === "string")) {
    throw new TypeError(
      `A commit's basis.ownParts is not a list of at most ${MAX_COMMIT_ITEMS} part names: give the parts under the prefix the request read.`,
    );
  }
  if (typeof basis.recordsRead !== "boolean") {
    throw new TypeError("A commit's basis.recordsRead is not true or false: say whether the request looked for a record it did not find.");
  }
}

/** A commit's id, as `commit` and `settle` take it: the store keeps it as part of a key name. */
export function checkCommitId(id: string): void {
  if (typeof id !== "string" || !/^[A-Za-z0-9:_-]{1,64}$/.test(id)) {
    throw new TypeError(`A commit id is ${JSON.stringify(id)}: give 1 to 64 of A-Z a-z 0-9 : _ -, a new one for every commit.`);
  }
}

/** A reseed's state: a lineage, and numbers that go on. */
export function checkReseed(state: Reseed): void {
  if (typeof state.lineage !== "string" || !/^\d{1,20}$/.test(state.lineage)) {
    throw new TypeError(`A reseed's lineage is ${JSON.stringify(state.lineage)}: give the StateChanges.lineage (or epoch) the state descends from.`);
  }
  if (typeof state.fromEpoch !== "string" || !/^\d{0,20}$/.test(state.fromEpoch)) {
    throw new TypeError(`A reseed's fromEpoch is ${JSON.stringify(state.fromEpoch)}: give the epoch the replica's state is of ("" for none).`);
  }
  if (!Number.isSafeInteger(state.position) || state.position < 0) {
    throw new TypeError(`A reseed's position is ${String(state.position)}: give the last position the replica synced or committed, 0 for none.`);
  }
  if (!Array.isArray(state.ancestry) || state.ancestry.length > 64 || !state.ancestry.every((a) => /^\d{0,20}:\d{1,16}$/.test(a))) {
    throw new TypeError(
      `A reseed's ancestry is not a list of at most 64 "<epoch>:<position>": give the StateChanges.ancestry of the replica's epoch.`,
    );
  }
  if (!Number.isSafeInteger(state.journalSeq) || state.journalSeq < 0) {
    throw new TypeError(`A reseed's journalSeq is ${String(state.journalSeq)}: give the last journal number given out, 0 for none.`);
  }
}

/** The event clear() leaves as the feed's only entry, so a replica following the feed learns of it. */
export const RESET_EVENT = '{"kind":"reset"}';

export function checkFeedArgs(limit: number, waitMs: number | undefined): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new TypeError(`A feed read's limit is ${String(limit)}: give a whole number of entries, 1 or more.`);
  }
  if (waitMs !== undefined && (!Number.isFinite(waitMs) || waitMs < 0)) {
    throw new TypeError(`A feed read's waitMs is ${String(waitMs)}: give milliseconds, 0 or more, or leave it out not to wait.`);
  }
}

/** Sessions one reap may end: the Redis store logs them in one stream entry (see MAX_COMMIT_ITEMS). */
const MAX_REAP = 1000;

export function checkReapArgs(idleBeforeMs: number, limit: number): void {
  if (!Number.isFinite(idleBeforeMs)) {
    throw new TypeError(
      `reap's idleBeforeMs is ${String(idleBeforeMs)}: give the wall-clock time (ms) before which a session's last use makes it idle.`,
    );
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_REAP) {
    throw new TypeError(`reap's limit is ${String(limit)}: give a whole number of sessions, 1 to ${MAX_REAP}.`);
  }
}
