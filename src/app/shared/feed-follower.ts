import { compareFeedIds, type FeedEntry, type StateStore } from "../../core/state-store.js";

/** Entries read per call while catching up, and per wait while following. */
const PAGE = 500;
/** How long one read of the feed waits for a new entry before asking again. */
const WAIT_MS = 1000;
/** After a read that brought entries, the pause before the next. */
const GATHER_MS = 20;
/** After a failed read (the store away), the pause before the next. */
const RETRY_MS = 200;

export interface FeedFollower {
  /** Resolves once every entry the feed held when it was called has been delivered. */
  catchUp(): Promise<void>;
  /** Stops following; `done` resolves when the last read has returned. */
  stop(): void;
  readonly done: Promise<void>;
}

/**
 * Follows the store's feed from its end as it is now: each entry committed after that, by any
 * replica, is delivered once, in order, however many readers (the follower's wait, a request's
 * catch-up) fetched it.
 */
export async function followFeed(store: StateStore, deliver: (entries: readonly FeedEntry[]) => void): Promise<FeedFollower> {
  let cursor = "";
  for (;;) {
    const page = await store.feed(cursor, PAGE);
    if (page.length > 0) cursor = page[page.length - 1]!.id;
    if (page.length < PAGE) break;
  }
  const take = (page: readonly FeedEntry[]): number => {
    const fresh = page.filter((e) => compareFeedIds(e.id, cursor) > 0);
    if (fresh.length > 0) {
      cursor = fresh[fresh.length - 1]!.id;
      deliver(fresh);
    }
    return page.length;
  };
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      try {
        // Busy: a pause lets entries gather, read many per call rather than one per request
        // (control-plane reads catch up first, so they never see the pause).
        if (take(await store.feed(cursor, PAGE, WAIT_MS)) > 0) await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      } catch {
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  })();
  return {
    async catchUp() {
      while (take(await store.feed(cursor, PAGE)) >= PAGE) {}
    },
    stop() {
      stopped = true;
    },
    done,
  };
}
