import type { CommitRequest } from "../core/state-store.js";

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
  if (!Number.isFinite(request.deadlineMs)) {
    throw new TypeError(`A commit's deadlineMs is ${String(request.deadlineMs)}: give the wall-clock time (ms) after which it must not apply.`);
  }
  if (request.touch && (!Number.isFinite(request.touch.atMs) || request.touch.session === "")) {
    throw new TypeError("A commit's touch needs a session id and a wall-clock time in ms (atMs).");
  }
}

/** The part that holds a session's state, by the name the sandbox gives it. */
export const SESSION_PART_PREFIX = "s:";

/** The session a part belongs to, when it is a session's part. */
export function sessionOfPart(name: string): string | undefined {
  return name.startsWith(SESSION_PART_PREFIX) ? name.slice(SESSION_PART_PREFIX.length) : undefined;
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

export function checkReapArgs(idleBeforeMs: number, limit: number): void {
  if (!Number.isFinite(idleBeforeMs)) {
    throw new TypeError(
      `reap's idleBeforeMs is ${String(idleBeforeMs)}: give the wall-clock time (ms) before which a session's last use makes it idle.`,
    );
  }
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new TypeError(`reap's limit is ${String(limit)}: give a whole number of sessions, 1 or more.`);
  }
}
