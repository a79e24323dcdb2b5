import { Redis, type RedisOptions } from "ioredis";
import { StateUnavailable } from "../core/errors.js";
import type { CommitRequest, CommitResult, FeedEntry, StateChanges, StateCursor, StateStore } from "../core/state-store.js";
import { checkCommit, checkFeedArgs, checkReapArgs, RESET_EVENT } from "./op-checks.js";
import { checkPrefix, DEFAULT_PREFIX, type KeyName, keyList, keyNames, LAYOUT_VERSION } from "./redis-layout.js";
import { commitArgs, readCommitAnswer, readFeedEntries, readJournal, readSyncAnswer, readXread } from "./redis-replies.js";
import { SCRIPTS, type ScriptName } from "./redis-scripts.js";
import { parseRedisUrl, type RedisTarget } from "./redis-url.js";
import { type ResolvedLimits, resolveLimits, type StoreLimits } from "./store-limits.js";

export interface RedisStoreOptions extends StoreLimits {
  /** How long any call waits for Redis before it is refused as unavailable. */
  commandTimeoutMs?: number;
  /** What every key starts with (before the `{sb}` hash tag). */
  prefix?: string;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
/** The longest pause between two attempts to reconnect, so a replica recovers soon after Redis is back. */
const RECONNECT_MAX_MS = 1000;
/** How long opening waits for a first connection at the least (a replica starting beside a Redis still starting). */
const OPEN_MIN_MS = 5000;
/** Connections kept for waiting feed reads once none is waiting on them. */
const IDLE_READERS = 2;

/** A store written in a layout this version does not read: the replica must not start on it. */
export class StoreLayoutMismatch extends Error {
  override readonly name = "StoreLayoutMismatch";
}

/**
 * Opens the Redis store at `url` (redis://[:PASSWORD@]HOST:PORT[/DB], rediss:// for TLS): connects,
 * checks the stored layout version (writing it into an empty store) and resolves when the store can
 * be used. Rejects with a TypeError for a bad URL or option, StoreLayoutMismatch for a store of
 * another layout, StateUnavailable when Redis does not answer.
 */
export async function openRedisStore(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
  const store = new RedisStore(parseRedisUrl(url), options);
  try {
    await store.start();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/**
 * The state store on Redis (7.0 or later), through ioredis: each operation is one round trip, a
 * Lua script where it writes or reads several keys (redis-scripts.ts), a plain command otherwise.
 *
 * Nothing waits on Redis unbounded: every command has `commandTimeoutMs`; nothing is queued while
 * the connection is down (`enableOfflineQueue: false`), so calls are refused at once then, and the
 * client reconnects by itself; a command in flight when the connection drops is failed, never sent
 * again (a commit sent twice could journal a request twice). Every such refusal is a
 * StateUnavailable naming the operation and the store, its password hidden. A commit that timed
 * out here may still reach Redis later; its deadline, checked against Redis's clock in the script,
 * keeps it from applying then.
 *
 * Feed reads that wait (XREAD BLOCK) use connections of their own, so a waiting read never holds
 * up the commands of the main connection; each has its own bound, the wait plus commandTimeoutMs.
 */
export class RedisStore implements StateStore {
  readonly shownAs: string;
  readonly #target: RedisTarget;
  readonly #limits: ResolvedLimits;
  readonly #timeoutMs: number;
  readonly #keys: string[];
  readonly #names: Record<KeyName, string>;
  readonly #main: Redis;
  readonly #idleReaders: Redis[] = [];
  readonly #busyReaders = new Set<Redis>();
  #lastError: Error | undefined;
  #closed = false;

  constructor(target: RedisTarget, options: RedisStoreOptions = {}) {
    this.#target = target;
    this.shownAs = target.shownAs;
    this.#limits = resolveLimits(options);
    this.#timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    if (!Number.isSafeInteger(this.#timeoutMs) || this.#timeoutMs < 1) {
      throw new TypeError(
        `commandTimeoutMs is ${String(options.commandTimeoutMs)}: give milliseconds, a whole number of 1 or more (default ${DEFAULT_COMMAND_TIMEOUT_MS}).`,
      );
    }
    const prefix = checkPrefix(options.prefix ?? DEFAULT_PREFIX);
    this.#keys = keyList(prefix);
    this.#names = keyNames(prefix);
    this.#main = this.#connection(this.#timeoutMs);
    for (const [name, lua] of Object.entries(SCRIPTS)) this.#main.defineCommand(name, { lua, numberOfKeys: this.#keys.length });
  }

  /** Connects and checks the layout (openRedisStore calls it). */
  async start(): Promise<void> {
    const bound = Math.max(this.#timeoutMs, OPEN_MIN_MS);
    await this.#connect(this.#main, bound, "connect");
    const reader = await this.#reader(bound);
    this.#busyReaders.delete(reader);
    this.#idleReaders.push(reader);
    try {
      await this.#script("msbOpen", []);
    } catch (error) {
      throw error instanceof StoreLayoutMismatch ? error : this.#unavailable("open", error);
    }
  }

  async sync(cursor: StateCursor): Promise<StateChanges> {
    return readSyncAnswer(await this.#run("sync", () => this.#script("msbSync", [cursor])));
  }

  async commit(request: CommitRequest): Promise<CommitResult> {
    checkCommit(request);
    return readCommitAnswer(await this.#run("commit", () => this.#script("msbCommit", commitArgs(request, this.#limits))));
  }

  async feed(after: string, limit: number, waitMs?: number): Promise<FeedEntry[]> {
    checkFeedArgs(limit, waitMs);
    if (after !== "" && !/^\d+-\d+$/.test(after)) {
      throw new TypeError(
        `A feed position of the Redis store is a stream id such as "1700000000000-0", or "" (from the oldest kept); got ${JSON.stringify(after)}.`,
      );
    }
    if (!waitMs) {
      const entries = await this.#run("feed", () => this.#main.xrange(this.#names.feed, after === "" ? "-" : `(${after}`, "+", "COUNT", limit));
      return readFeedEntries(entries);
    }
    return readXread(await this.#run("feed", () => this.#waitingRead(after === "" ? "0-0" : after, limit, Math.ceil(waitMs))));
  }

  async journal(): Promise<Array<{ seq: number; json: string }>> {
    return readJournal(await this.#run("journal", () => this.#main.xrange(this.#names.journal, "-", "+")));
  }

  async reap(idleBeforeMs: number, limit: number): Promise<string[]> {
    checkReapArgs(idleBeforeMs, limit);
    const args = [String(idleBeforeMs), String(limit), String(this.#limits.changeLogSize), this.#deadline()];
    const answer = await this.#run("reap", () => this.#script("msbReap", args));
    if (answer === "late") throw this.#late("reap");
    return answer as string[];
  }

  async lastUse(sessions: readonly string[]): Promise<Array<number | undefined>> {
    if (sessions.length === 0) return [];
    const scores = await this.#run("lastUse", () => this.#main.zmscore(this.#names.lastUse, ...sessions));
    return scores.map((s) => (s === null ? undefined : Number(s)));
  }

  async ping(): Promise<void> {
    await this.#run("ping", () => this.#main.ping());
  }

  async clear(): Promise<void> {
    const answer = await this.#run("clear", () => this.#script("msbClear", [String(this.#limits.feedSize), RESET_EVENT, this.#deadline()]));
    if (answer === "late") throw this.#late("clear");
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#main.disconnect();
    for (const reader of [...this.#idleReaders.splice(0), ...this.#busyReaders]) reader.disconnect();
  }

  #connection(commandTimeout: number | undefined): Redis {
    const t = this.#target;
    const options: RedisOptions = {
      host: t.host,
      port: t.port,
      db: t.db,
      ...(t.username !== undefined ? { username: t.username } : {}),
      ...(t.password !== undefined ? { password: t.password } : {}),
      ...(t.tls ? { tls: { servername: t.host } } : {}),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), RECONNECT_MAX_MS),
      connectTimeout: Math.max(this.#timeoutMs, OPEN_MIN_MS),
      ...(commandTimeout !== undefined ? { commandTimeout } : {}),
      connectionName: "merchant-sandbox",
    };
    const redis = new Redis(options);
    // ioredis reports every failed (re)connection as an 'error' event; kept for the next refusal's message.
    redis.on("error", (error: Error) => {
      this.#lastError = error;
    });
    redis.on("ready", () => {
      this.#lastError = undefined;
    });
    return redis;
  }

  async #connect(redis: Redis, boundMs: number, op: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no connection within ${boundMs} ms`)), boundMs);
    });
    const connecting = redis.connect();
    connecting.catch(() => {});
    try {
      await Promise.race([connecting, timeout]);
    } catch (error) {
      redis.disconnect();
      throw this.#unavailable(op, error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A connection for a waiting read, counted busy until the caller is done with it (so close()
   * ends it, even while it connects): an idle one, or a new one.
   */
  async #reader(boundMs = this.#timeoutMs): Promise<Redis> {
    const idle = this.#idleReaders.pop();
    if (idle && idle.status === "ready") {
      this.#busyReaders.add(idle);
      return idle;
    }
    idle?.disconnect();
    const reader = this.#connection(undefined);
    this.#busyReaders.add(reader);
    try {
      await this.#connect(reader, boundMs, "feed");
    } catch (error) {
      this.#busyReaders.delete(reader);
      throw error;
    }
    return reader;
  }

  async #waitingRead(from: string, limit: number, waitMs: number): Promise<unknown> {
    const reader = await this.#reader();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const read = reader.xread("COUNT", limit, "BLOCK", waitMs, "STREAMS", this.#names.feed, from);
    read.catch(() => {});
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new Error("Command timed out"));
      }, waitMs + this.#timeoutMs);
    });
    try {
      const answer = await Promise.race([read, bound]);
      if (!this.#closed && this.#idleReaders.length < IDLE_READERS) this.#idleReaders.push(reader);
      else reader.disconnect();
      return answer;
    } catch (error) {
      // A read that outlived its bound is still queued on its connection: that connection is dropped with it.
      reader.disconnect();
      throw timedOut ? new Error(`no answer within ${waitMs + this.#timeoutMs} ms`) : error;
    } finally {
      clearTimeout(timer);
      this.#busyReaders.delete(reader);
    }
  }

  #script(name: ScriptName, args: string[]): Promise<unknown> {
    const call = (this.#main as unknown as Record<ScriptName, (...a: string[]) => Promise<unknown>>)[name];
    return call.call(this.#main, ...this.#keys, LAYOUT_VERSION, ...args).catch((error: Error) => {
      const layout = /^MSBLAYOUT (.*)$/.exec(error.message);
      throw layout ? new StoreLayoutMismatch(this.#layoutMessage(layout[1]!)) : error;
    });
  }

  async #run<T>(op: string, call: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new StateUnavailable(`The state store ${this.shownAs} is closed: ${op} was called after close().`);
    try {
      return await call();
    } catch (error) {
      if (error instanceof StateUnavailable) throw error;
      throw error instanceof StoreLayoutMismatch ? new StateUnavailable(error.message) : this.#unavailable(op, error);
    }
  }

  #unavailable(op: string, error: unknown): StateUnavailable {
    const message = error instanceof Error ? error.message : String(error);
    const last = this.#lastError ? ` (the last connection error: ${this.#lastError.message.replace(/\.+$/, "")})` : "";
    let why: string;
    if (this.#closed) why = "the store was closed";
    else if (message === "Command timed out") why = `no answer within ${this.#timeoutMs} ms`;
    else if (/enableOfflineQueue|Connection is closed|MaxRetriesPerRequest|aborted due to connection close/i.test(message)) {
      why = `not connected${last}`;
    } else if (/^no (answer|connection) within/.test(message)) why = `${message}${last}`;
    else why = error instanceof Error && error.name === "ReplyError" ? `Redis answered: ${message}` : message;
    why = why.replace(/\.+$/, "");
    const text = `The state store ${this.shownAs} is unavailable: ${op} failed, ${why}. The replica reconnects by itself; requests that need the shared state are refused until then.`;
    return new StateUnavailable(this.#hidePassword(text));
  }

  /**
   * When a write the caller was not given a deadline for must no longer apply: once this replica
   * has given up on it. A reap or clear that timed out here and reached Redis later is then not
   * applied, as a late commit is not.
   */
  #deadline(): string {
    return String(Date.now() + this.#timeoutMs);
  }

  #late(op: string): StateUnavailable {
    return new StateUnavailable(
      `The state store ${this.shownAs} ran ${op} after its deadline, so did nothing: Redis's clock is ahead of this replica's by more than commandTimeoutMs (${this.#timeoutMs} ms), or Redis was that slow. Keep the clocks in sync (NTP).`,
    );
  }

  #layoutMessage(found: string): string {
    return (
      `The state store ${this.shownAs} holds state in layout version ${found} (key ${this.#names.layout}), and this version of ` +
      `merchant-sandbox reads and writes layout version ${LAYOUT_VERSION}. Replicas of different layouts cannot share a store: run one ` +
      `version against it, or give this one a store of its own (another database, redis://HOST:PORT/DB, or another key prefix), or, ` +
      `if the stored state may be lost, delete its keys (${this.#names.layout.replace(/layout$/, "*")}) and start again.`
    );
  }

  #hidePassword(text: string): string {
    const password = this.#target.password;
    return password ? text.split(password).join("***") : text;
  }
}
