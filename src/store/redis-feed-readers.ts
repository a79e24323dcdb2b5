import type { Redis } from "ioredis";

/** Connections kept for waiting feed reads once none is waiting on them. */
const IDLE_READERS = 2;

/**
 * The connections of the Redis store's waiting feed reads (XREAD BLOCK): a waiting read has a
 * connection of its own, so it never holds up the commands of the main one; each has its own
 * bound, the wait plus the command timeout. A few idle ones are kept; close() ends them all, even
 * one still connecting.
 */
export class FeedReaders {
  readonly #idle: Redis[] = [];
  readonly #busy = new Set<Redis>();
  #closed = false;

  constructor(
    private readonly connection: () => Redis,
    /** Connects within the bound, or rejects with the store's refusal (the connection dropped). */
    private readonly connect: (redis: Redis, boundMs: number, op: string) => Promise<void>,
    private readonly timeoutMs: number,
    private readonly feedKey: string,
  ) {}

  /** Opens one reader now and keeps it idle (a store's start: it proves readers can connect). */
  async warm(boundMs: number): Promise<void> {
    const reader = await this.#take(boundMs);
    this.#busy.delete(reader);
    this.#idle.push(reader);
  }

  /** XREAD of the feed after `from`, waiting up to `waitMs` for an entry. */
  async read(from: string, limit: number, waitMs: number): Promise<unknown> {
    const reader = await this.#take(this.timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const read = reader.xread("COUNT", limit, "BLOCK", waitMs, "STREAMS", this.feedKey, from);
    read.catch(() => {});
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new Error("Command timed out"));
      }, waitMs + this.timeoutMs);
    });
    try {
      const answer = await Promise.race([read, bound]);
      if (!this.#closed && this.#idle.length < IDLE_READERS) this.#idle.push(reader);
      else reader.disconnect();
      return answer;
    } catch (error) {
      // A read that outlived its bound is still queued on its connection: that connection is dropped with it.
      reader.disconnect();
      throw timedOut ? new Error(`no answer within ${waitMs + this.timeoutMs} ms`) : error;
    } finally {
      clearTimeout(timer);
      this.#busy.delete(reader);
    }
  }

  close(): void {
    this.#closed = true;
    for (const reader of [...this.#idle.splice(0), ...this.#busy]) reader.disconnect();
  }

  /** A connection, counted busy until the caller is done with it: an idle one, or a new one. */
  async #take(boundMs: number): Promise<Redis> {
    const idle = this.#idle.pop();
    if (idle && idle.status === "ready") {
      this.#busy.add(idle);
      return idle;
    }
    idle?.disconnect();
    const reader = this.connection();
    this.#busy.add(reader);
    try {
      await this.connect(reader, boundMs, "feed");
    } catch (error) {
      this.#busy.delete(reader);
      throw error;
    }
    return reader;
  }
}
