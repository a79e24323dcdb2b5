/**
 * The request journal: what each request did, for tests and the integration report. A bounded ring
 * buffer (the oldest entries go first), so memory stays flat however long the sandbox runs.
 * Entries are built from the request trace, never from raw values: no secret, password, payment
 * token or JWT is ever in one, only token ids (`jti`) and redacted query strings.
 */
export interface JournalEntry {
  /** `req_<n>`, increasing. */
  id: string;
  seq: number;
  /** Wall-clock time the request arrived. */
  time: string;
  /** The time on the scenario's clock when it arrived (what token expiry is judged by). */
  sandboxTime: string;
  method: string;
  /**
   * With secret-looking values redacted, then cut at `JOURNAL_TEXT_CAP` characters with a
   * `…(N more chars)` suffix (the redaction first: a cut secret would no longer be recognised).
   */
  path: string;
  /** With secret-looking values redacted, then cut as `path` is. */
  query: string;
  status: number;
  durationMs: number;
  endpoint: string;
  scenario: string;
  session?: string;
  /** The merchant the request named (by api_key, e-mail, payment token or token `sub`). */
  merchant?: string;
  /**
   * The request named `merchant` but did not prove it (a wrong secret or password, a token no
   * sandbox key signed): it fired none of the merchant's rules and counts in none of its findings.
   */
  unverified?: boolean;
  /** The jti of an access token issued or accepted by this request (the deprecated login's token included). */
  tokenId?: string;
  /**
   * When the token this request was issued expires (its `exp`), on the issuing scenario's clock,
   * as `sandboxTime` is: token exchanges and the deprecated login that answered with a token.
   */
  tokenExpiresAt?: string;
  /** The jti of the bearer token the request presented, valid or not. */
  presentedTokenId?: string;
  /** The refusal's stable code. */
  code?: string;
  /**
   * On a `token_expired` refusal, when the sandbox or the test made the token expire, not the
   * passing of time the client could see: `early`, expired before its exp (expire_token);
   * `clock_jump`, one move of the clock carried it from before its renewal point (90 % of its
   * lifetime) to past its exp. The report does not count such a renewal against the client.
   * (core/forced-expiry.ts decides; spelled out here, as this file imports nothing: the QA page
   * takes its types.)
   */
  tokenExpiry?: "early" | "clock_jump";
  /** `scenario/rule` of the rules that fired. */
  rules?: string[];
  /** Seconds, from the answer's Retry-After header. */
  retryAfter?: number;
  /** Where the credentials came from, on the token endpoint. */
  credentialSources?: { apiKey?: "body" | "header" | "both"; apiSecret?: "body" | "header" | "both" };
  /** The query string carried something secret-looking (a token, a secret, a password). */
  secretInQuery?: boolean;
  /**
   * Sent under a session's base URL (`/s/{id}/...`): `session` is that session whatever the
   * credentials, and `path` the path under the base URL. Under an unknown or ended session's URL
   * there is no `session`, and `path` is the whole path (code `session_url_unknown`).
   */
  viaSessionUrl?: true;
  /** Payment or cashout was called with the deprecated login's token (accepted or refused by the `loginToken` setting). */
  loginToken?: true;
}

/** What the pipeline records per request: times as epoch milliseconds, formatted when read. */
export type JournalRecord = Omit<JournalEntry, "id" | "seq" | "time" | "sandboxTime" | "tokenExpiresAt"> & {
  timeMs: number;
  sandboxTimeMs: number;
  tokenExpiresAtMs?: number;
};

interface Stored {
  seq: number;
  record: JournalRecord;
}

export interface JournalFilter {
  session?: string;
  merchant?: string;
  /** Entries after this one: a request id (`req_12`) or an ISO time. */
  since?: string;
  limit?: number;
}

/**
 * The most characters of a path or a query an entry keeps: what a client sends is up to the header
 * limit, and a redacted value can be longer than the raw one; every entry is then small enough for
 * the journal's size in memory, and a page of it in an answer, to have a stated bound
 * (docs/configuration.md, Limits).
 */
export const JOURNAL_TEXT_CAP = 1024;

/**
 * Whether a journaled request was its session's use (it keeps the session from being reaped): only
 * the session's own client's. A request that proved a merchant's identity is; one under the
 * session's base URL is too whatever its credentials (the URL comes from the control plane with
 * the session, as its credentials do), but one refused for carrying another merchant's: that is
 * another client's mistake. A request that merely names a merchant is not. The pipeline asks it of
 * the request it answered, and a replica sharing state of every request the feed brings.
 */
export function usesItsSession(record: JournalRecord): boolean {
  if (record.session === undefined) return false;
  if (record.viaSessionUrl) return record.code !== "session_credentials_mismatch";
  return record.merchant !== undefined && !record.unverified;
}

/** The most entries one listing returns (GET /__sandbox/requests `limit`), also its default. */
export const JOURNAL_PAGE_MAX = 1000;

/** `text` cut at the cap, saying how much was cut; as it was when within. */
export function capJournalText(text: string): string {
  if (text.length <= JOURNAL_TEXT_CAP) return text;
  // Cut already (the pipeline cuts before the store, the journal again for what it is handed): as it is.
  const mark = CUT_MARK.exec(text);
  if (mark && text.length - mark[0].length <= JOURNAL_TEXT_CAP) return text;
  return `${text.slice(0, JOURNAL_TEXT_CAP)}…(${text.length - JOURNAL_TEXT_CAP} more chars)`;
}

/** How capJournalText marks what it cut (at the end, and nothing but digits in it). */
const CUT_MARK = /…\(\d{1,12} more chars\)$/;

export class Journal {
  // Records are kept as the pipeline made them: formatting (ids, ISO dates) happens on read, which
  // is rare, rather than on every request, which is the hot path.
  private readonly entries: Stored[] = [];
  private next = 1;
  private start = 0;

  constructor(readonly capacity: number) {}

  /**
   * Keeps `record`, its path and query cut to the cap (already redacted by the pipeline). `seq`:
   * the number the shared store gave it (a replica's journal mirrors the store's), never below
   * one kept already; else the next.
   */
  add(record: JournalRecord, seq?: number): void {
    if (record.path.length > JOURNAL_TEXT_CAP || record.query.length > JOURNAL_TEXT_CAP) {
      record = { ...record, path: capJournalText(record.path), query: capJournalText(record.query) };
    }
    if (seq !== undefined) {
      if (seq < this.next) return;
      this.next = seq;
    }
    const stored = { seq: this.next++, record };
    if (this.entries.length < this.capacity) this.entries.push(stored);
    else {
      this.entries[this.start] = stored;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** The id of the entry added last (`req_0` before any): what events that are not requests carry. */
  lastId(): string {
    return `req_${this.next - 1}`;
  }

  /** The entry added last, formatted (the event stream sends it as it is listed). */
  latest(): JournalEntry | undefined {
    if (this.entries.length === 0) return undefined;
    const last = this.entries.length < this.capacity ? this.entries.length - 1 : (this.start + this.capacity - 1) % this.capacity;
    return toEntry(this.entries[last]!);
  }

  /** Oldest first. */
  list(filter: JournalFilter = {}): JournalEntry[] {
    const ordered = [...this.entries.slice(this.start), ...this.entries.slice(0, this.start)];
    const sinceSeq = filter.since && /^req_\d+$/.test(filter.since) ? Number(filter.since.slice(4)) : undefined;
    const sinceTime = filter.since && sinceSeq === undefined ? Date.parse(filter.since) : undefined;
    const kept = ordered.filter(
      ({ seq, record }) =>
        (filter.session === undefined || record.session === filter.session) &&
        (filter.merchant === undefined || record.merchant === filter.merchant) &&
        (sinceSeq === undefined || seq > sinceSeq) &&
        (sinceTime === undefined || record.timeMs > sinceTime),
    );
    // With `since`, a page forward (the next N); without, the latest N.
    const page = filter.limit === undefined ? kept : filter.since !== undefined ? kept.slice(0, filter.limit) : kept.slice(-filter.limit);
    return page.map(toEntry);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The records kept, oldest first, with their numbers, as the pipeline made them (a shared store is written from them). */
  stored(): ReadonlyArray<{ readonly seq: number; readonly record: JournalRecord }> {
    return [...this.entries.slice(this.start), ...this.entries.slice(0, this.start)];
  }

  clear(): void {
    this.entries.length = 0;
    this.start = 0;
  }

  /** Empty, and numbering from the store's numbers again (a replica reloading the shared journal). */
  restart(): void {
    this.clear();
    this.next = 1;
  }

  /** The number the next entry gets, unless the store gives one. */
  get nextSeq(): number {
    return this.next;
  }
}

function toEntry({ seq, record }: Stored): JournalEntry {
  const { timeMs, sandboxTimeMs, tokenExpiresAtMs, ...rest } = record;
  const entry: JournalEntry = {
    id: `req_${seq}`,
    seq,
    time: new Date(timeMs).toISOString(),
    sandboxTime: new Date(sandboxTimeMs).toISOString(),
    ...rest,
  };
  if (tokenExpiresAtMs !== undefined) entry.tokenExpiresAt = new Date(tokenExpiresAtMs).toISOString();
  return entry;
}
