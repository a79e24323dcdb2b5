/**
 * What the Redis store says when it cannot be used: which call failed, why, and what to do,
 * quoting Redis's own refusal (DENIED, NOAUTH, WRONGPASS, LOADING, …) when it gave one. Every text
 * passes through the caller's password hiding.
 */

/** Advice for the refusals Redis gives by the first word of its error. */
const ADVICE: Record<string, string> = {
  DENIED:
    "Redis is in protected mode and takes no connection from another host without a password: set requirepass and give the password in the URL (redis://:PASSWORD@HOST:PORT), or bind it to a private interface with protected-mode no",
  NOAUTH: "Redis asks for a password: give it in the URL (redis://:PASSWORD@HOST:PORT, or redis://USER:PASSWORD@… for an ACL user)",
  WRONGPASS: "the user name or password in the URL is not one Redis knows: check --state",
  NOPERM:
    "the ACL user of the URL may not run what the store needs: allow it EVAL, EVALSHA, XADD, XRANGE, XREAD and the hash, set and string commands on the store's keys",
  LOADING: "Redis is loading its data set into memory: the replica retries by itself once it is done",
  READONLY: "this Redis is a read-only replica: point --state at its primary",
  MASTERDOWN: "this Redis replica lost its primary: point --state at the primary",
  MISCONF: "Redis refuses writes because it cannot save its snapshot: fix its disk or set stop-writes-on-bgsave-error no",
  OOM: "Redis is at its maxmemory and evicts nothing it may: raise maxmemory, or give the store a Redis of its own",
  NOSCRIPT: "Redis dropped the store's scripts (SCRIPT FLUSH): the replica loads them again by itself",
};

/** A Redis refusal's text with what to do about it, when it is one of those known. */
export function redisSaid(message: string): string {
  const word = /^([A-Z]+)\b/.exec(message)?.[1];
  const advice = word === undefined ? undefined : ADVICE[word];
  const said = `Redis answered "${message.replace(/\.+$/, "")}"`;
  return advice ? `${said}: ${advice}` : said;
}

export interface FailureFacts {
  readonly shownAs: string;
  readonly op: string;
  readonly closed: boolean;
  readonly boundMs: number;
  /** The last connection error ioredis reported, if the connection is not up. */
  readonly lastError: Error | undefined;
}

/** Why a call failed, for StateUnavailable's message; `unsent` when nothing was written to the connection. */
export function unavailableText(error: unknown, facts: FailureFacts): { text: string; unsent: boolean } {
  const message = error instanceof Error ? error.message : String(error);
  const unsent = facts.closed || /enableOfflineQueue/.test(message);
  const lastError = facts.lastError;
  const last = lastError
    ? ` (the last connection error: ${lastError.name === "ReplyError" ? redisSaid(lastError.message) : lastError.message.replace(/\.+$/, "")})`
    : "";
  let why: string;
  if (facts.closed) why = "the store was closed";
  else if (message === "Command timed out") why = `no answer within ${facts.boundMs} ms`;
  else if (/enableOfflineQueue|Connection is closed|MaxRetriesPerRequest|aborted due to connection close/i.test(message)) {
    why = `not connected${last}`;
  } else if (/^no (answer|connection) within/.test(message)) why = `${message}${last}`;
  else why = error instanceof Error && error.name === "ReplyError" ? redisSaid(message) : message;
  why = why.replace(/\.+$/, "");
  return {
    text: `The state store ${facts.shownAs} is unavailable: ${facts.op} failed, ${why}. The replica reconnects by itself; requests that need the shared state are refused until then.`,
    unsent,
  };
}

export function lateText(shownAs: string, op: string, timeoutMs: number): string {
  return `The state store ${shownAs} ran ${op} after its deadline, so did nothing: Redis's clock is ahead of this replica's by more than commandTimeoutMs (${timeoutMs} ms), or Redis was that slow. Keep the clocks in sync (NTP).`;
}

export function layoutText(shownAs: string, layoutKey: string, found: string, version: string): string {
  return (
    `The state store ${shownAs} holds state in layout version ${found} (key ${layoutKey}), and this version of ` +
    `merchant-sandbox reads and writes layout version ${version}. Replicas of different layouts cannot share a store: run one ` +
    `version against it, or give this one a store of its own (another database, redis://HOST:PORT/DB, or another key prefix), or, ` +
    `if the stored state may be lost, delete its keys (${layoutKey.replace(/layout$/, "*")}) and start again.`
  );
}
