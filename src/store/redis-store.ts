import { Redis, type RedisOptions } from "ioredis";
import { StateUnavailable } from "../core/errors.js";
import {
  COMMIT_OUTCOME_KEPT_MS,
  type CommitRequest,
  type CommitResult,
  type FeedEntry,
  type Reseed,
  type ReseedResult,
  type SettleResult,
  type StateChanges,
  type StateCursor,
  type StateStore,
} from "../core/state-store.js";
import { checkCommit, checkCommitId, checkFeedArgs, checkReapArgs, checkReseed } from "./op-checks.js";
import { checkPrefix, DEFAULT_PREFIX, type KeyName, keyNames, LAYOUT_VERSION } from "./redis-layout.js";
import {
  commitArgs,
  readCommitAnswers,
  readFeedEntries,
  readJournal,
  readReseedAnswer,
  readSettleAnswer,
  readSyncAnswer,
  readXread,
  reseedArgs,
} from "./redis-replies.js";
import { LUA_SCRIPTS } from "./lua/scripts.generated.js";
import { CommitBatches } from "./commit-batches.js";
import { lateText, layoutText, unavailableText } from "./redis-messages.js";
import { FeedReaders } from "./redis-feed-readers.js";
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
/**
 * Calls waiting for Redis on the main connection at once: past it a call is refused at once, so a
 * frozen Redis cannot pile up the replica's memory (a call past its bound stays queued on the
 * connection until Redis answers or the connection drops).
 */
const MAX_IN_FLIGHT = 2000;

/**
 * Commits sent in one call at the most. Small: while Redis runs one batch the replica makes the
 * next, rather than both taking turns on one large batch (docs/performance.md has the figures).
 */
const MAX_BATCH = 4;

type ScriptName = keyof typeof LUA_SCRIPTS;

/** A store written in a layout this version does not read: the replica must not start on it. */
export class StoreLayoutMismatch extends StateUnavailable {}

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
 * The Redis store at `url`, connecting in the background, for a replica that may start before
 * Redis: calls are refused as unavailable until the connection is up, and the client keeps
 * connecting by itself. `ready(boundMs)` waits for the first connection. Throws a TypeError for a
 * bad URL or option.
 */
export function connectRedisStore(url: string, options: RedisStoreOptions = {}): RedisStore {
  const store = new RedisStore(parseRedisUrl(url), options);
  store.connectInBackground();
  return store;
}

/**
 * The state store on Redis (7.0 or later), through ioredis: each operation is one round trip, a
 * Lua script where it writes or reads several keys (lua/*.lua), a plain command otherwise.
 *
 * Nothing waits on Redis unbounded: every call has `commandTimeoutMs` (`settle` the wait it is
 * given), and at most MAX_IN_FLIGHT wait at once; nothing is queued while the connection is down
 * (`enableOfflineQueue: false`), so calls are refused at once then (`unsent`), and the client
 * reconnects by itself; a command in flight when the connection drops is failed, never sent again
 * (a commit sent twice could journal a request twice). Every such refusal is a StateUnavailable
 * naming the operation and the store, its password hidden. A commit whose answer did not come in
 * time may still have applied: the replica asks `settle`, which Redis answers after the commit
 * (one connection keeps their order), and which makes a commit that comes later refused.
 *
 * Feed reads that wait (XREAD BLOCK) use connections of their own, so a waiting read never holds
 * up the commands of the main connection; each has its own bound, the wait plus commandTimeoutMs.
 */
export class RedisStore implements StateStore {
  readonly shownAs: string;
  readonly #target: RedisTarget;
  readonly #limits: ResolvedLimits;
  readonly #timeoutMs: number;
  readonly #names: Record<KeyName, string>;
  /** Each script's command and the key names it is given, made once: every request runs one. */
  readonly #scripts = new Map<ScriptName, { run: (...args: string[]) => Promise<unknown>; keys: string[] }>();
  #inFlight = 0;
  readonly #batches = new CommitBatches((requests) => this.#commitNow(requests), MAX_BATCH);
  readonly #main: Redis;
  readonly #readers: FeedReaders;
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
    this.#names = keyNames(prefix);
    this.#main = this.#connection();
    this.#readers = new FeedReaders(
      () => this.#connection(),
      (redis, boundMs, op) => this.#connect(redis, boundMs, op),
      this.#timeoutMs,
      this.#names.feed,
    );
    for (const [name, script] of Object.entries(LUA_SCRIPTS) as Array<[ScriptName, (typeof LUA_SCRIPTS)[ScriptName]]>) {
      this.#main.defineCommand(`msb_${name}`, { lua: script.lua, numberOfKeys: script.keys.length });
      const run = (this.#main as unknown as Record<string, (...a: string[]) => Promise<unknown>>)[`msb_${name}`]!.bind(this.#main);
      this.#scripts.set(name, { run, keys: [...script.keys.map((key) => this.#names[key]), LAYOUT_VERSION] });
    }
  }

  /** Connects and checks the layout (openRedisStore calls it). */
  async start(): Promise<void> {
    const bound = Math.max(this.#timeoutMs, OPEN_MIN_MS);
    await this.#connect(this.#main, bound, "connect");
    await this.#readers.warm(bound);
    try {
      await this.#script("open", []);
    } catch (error) {
      throw error instanceof StoreLayoutMismatch ? error : this.#unavailable("open", error);
    }
  }

  /** Starts connecting, and connecting again after each failure, without waiting. */
  connectInBackground(): void {
    this.#main.connect().catch(() => {
      // ioredis reconnects by itself (retryStrategy); the 'error' listener keeps what failed.
    });
  }

  /** Resolves once the main connection is up, or after `boundMs` in any case (calls then say why). */
  async ready(boundMs: number): Promise<void> {
    if (this.#main.status === "ready") return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#main.off("ready", done);
        resolve();
      };
      const timer = setTimeout(done, boundMs);
      this.#main.on("ready", done);
    });
  }

  async sync(cursor: StateCursor): Promise<StateChanges> {
    return readSyncAnswer(await this.#run("sync", () => this.#script("sync", [cursor])));
  }

  async commit(request: CommitRequest): Promise<CommitResult> {
    checkCommit(request);
    return this.#batches.commit(request);
  }

  /** Commits made at once (CommitBatches), in one call: a refusal of the call is every commit's. */
  async #commitNow(requests: CommitRequest[]): Promise<CommitResult[]> {
    const args = commitArgs(requests, this.#limits, COMMIT_OUTCOME_KEPT_MS);
    return readCommitAnswers(await this.#run("commit", () => this.#script("commit", args)), requests);
  }

  async settle(id: string, waitMs: number): Promise<SettleResult> {
    checkCommitId(id);
    return readSettleAnswer(await this.#run("settle", () => this.#script("settle", [id, String(COMMIT_OUTCOME_KEPT_MS)]), waitMs));
  }

  async reseed(state: Reseed): Promise<ReseedResult> {
    checkReseed(state);
    return readReseedAnswer(await this.#run("reseed", () => this.#script("reseed", reseedArgs(state, this.#limits))));
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
    const wait = Math.ceil(waitMs);
    // The waiting read has its own bound (the wait and the timeout), on a connection of its own.
    return readXread(await this.#run("feed", () => this.#readers.read(after === "" ? "0-0" : after, limit, wait), wait + 2 * this.#timeoutMs));
  }

  async journal(): Promise<Array<{ seq: number; json: string }>> {
    return readJournal(await this.#run("journal", () => this.#main.xrange(this.#names.journal, "-", "+")));
  }

  async reap(idleBeforeMs: number, limit: number): Promise<string[]> {
    checkReapArgs(idleBeforeMs, limit);
    const args = [String(idleBeforeMs), String(limit), String(this.#limits.changeLogSize), this.#deadline()];
    const answer = await this.#run("reap", () => this.#script("reap", args));
    if (answer === "late") throw new StateUnavailable(lateText(this.shownAs, "reap", this.#timeoutMs));
    return answer as string[];
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#main.disconnect();
    this.#readers.close();
  }

  #connection(): Redis {
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

  #script(name: ScriptName, args: string[]): Promise<unknown> {
    const script = this.#scripts.get(name)!;
    return script.run(...script.keys, ...args).catch((error: Error) => {
      const layout = /^MSBLAYOUT (.*)$/.exec(error.message);
      throw layout ? new StoreLayoutMismatch(layoutText(this.shownAs, this.#names.layout, layout[1]!, LAYOUT_VERSION)) : error;
    });
  }

  /**
   * One call, bounded: refused when it does not answer within `boundMs`. The command itself stays
   * queued on its connection until Redis answers it (its answer is then dropped), counted among
   * the calls in flight until then.
   */
  async #run<T>(op: string, call: () => Promise<T>, boundMs = this.#timeoutMs): Promise<T> {
    if (this.#closed) throw new StateUnavailable(`The state store ${this.shownAs} is closed: ${op} was called after close().`, 1, true);
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      throw new StateUnavailable(
        this.#hidePassword(
          `The state store ${this.shownAs} is unavailable: ${MAX_IN_FLIGHT} calls are waiting for Redis already, so ${op} was not sent.`,
        ),
        1,
        true,
      );
    }
    this.#inFlight++;
    let timer: NodeJS.Timeout | undefined;
    const pending = call().finally(() => {
      this.#inFlight--;
    });
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("Command timed out")), boundMs);
    });
    pending.catch(() => {});
    try {
      return await Promise.race([pending, bound]);
    } catch (error) {
      if (error instanceof StateUnavailable) throw error;
      throw error instanceof StoreLayoutMismatch ? new StateUnavailable(error.message) : this.#unavailable(op, error, boundMs);
    } finally {
      clearTimeout(timer);
    }
  }

  #unavailable(op: string, error: unknown, boundMs = this.#timeoutMs): StateUnavailable {
    const facts = { shownAs: this.shownAs, op, closed: this.#closed, boundMs, lastError: this.#lastError };
    const { text, unsent } = unavailableText(error, facts);
    return new StateUnavailable(this.#hidePassword(text), 1, unsent);
  }

  /**
   * When a write the caller was not given a deadline for must no longer apply: once this replica
   * has given up on it. A reap that timed out here and reached Redis later is then not applied, as
   * a late commit is not.
   */
  #deadline(): string {
    return String(Date.now() + this.#timeoutMs);
  }

  #hidePassword(text: string): string {
    const password = this.#target.password;
    return password ? text.split(password).join("***") : text;
  }
}
