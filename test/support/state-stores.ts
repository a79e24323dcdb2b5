import { StateUnavailable } from "../../src/core/errors.js";
import type { StateStore } from "../../src/core/state-store.js";

/**
 * `inner` with some of its operations replaced, for tests that break or watch a store: every
 * operation not in `replaced` goes to `inner` as it is; close() leaves `inner` open (replicas share it).
 */
export function over(inner: StateStore, replaced: Partial<StateStore> = {}): StateStore {
  return {
    shownAs: inner.shownAs,
    sync: (cursor) => inner.sync(cursor),
    commit: (request) => inner.commit(request),
    settle: (id, waitMs) => inner.settle(id, waitMs),
    reseed: (state) => inner.reseed(state),
    feed: (after, limit, waitMs) => inner.feed(after, limit, waitMs),
    journal: () => inner.journal(),
    reap: (before, limit) => inner.reap(before, limit),
    close: async () => {},
    ...replaced,
  };
}

/** A store that sends every operation to the store `current()` gives at that moment (one a test replaces: a Redis restarted empty). */
export function following(current: () => StateStore): StateStore {
  return {
    get shownAs() {
      return current().shownAs;
    },
    sync: (cursor) => current().sync(cursor),
    commit: (request) => current().commit(request),
    settle: (id, waitMs) => current().settle(id, waitMs),
    reseed: (state) => current().reseed(state),
    feed: (after, limit, waitMs) => current().feed(after, limit, waitMs),
    journal: () => current().journal(),
    reap: (before, limit) => current().reap(before, limit),
    close: async () => {},
  };
}

/** A store that refuses every operation as not reached (a link the test cut). */
export function unreachable(why: string): StateStore {
  const refuse = () => Promise.reject(new StateUnavailable(why, 1, true));
  return {
    shownAs: "memory",
    sync: refuse,
    commit: refuse,
    settle: refuse,
    reseed: refuse,
    feed: refuse,
    journal: refuse,
    reap: refuse,
    close: async () => {},
  };
}
