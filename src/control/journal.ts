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
  path: string;
  /** With secret-looking values redacted. */
  query: string;
  status: number;
  durationMs: number;
  endpoint: string;
  scenario: string;
  session?: string;
  merchant?: string;
  /** The jti of an access token issued or accepted by this request. */
  tokenId?: string;
  /** The jti of the bearer token the request presented, valid or not. */
  presentedTokenId?: string;
  /** The refusal's stable code. */
  code?: string;
  /** `scenario/rule` of the rules that fired. */
  rules?: string[];
  /** Seconds, from the answer's Retry-After header. */
  retryAfter?: number;
  /** Where the credentials came from, on the token endpoint. */
  credentialSources?: { apiKey?: "body" | "header" | "both"; apiSecret?: "body" | "header" | "both" };
  /** The query string carried something secret-looking (a token, a secret, a password). */
  secretInQuery?: boolean;
}

export interface JournalFilter {
  session?: string;
  merchant?: string;
  /** Entries after this one: a request id (`req_12`) or an ISO time. */
  since?: string;
  limit?: number;
}

export class Journal {
  private readonly entries: JournalEntry[] = [];
  private next = 1;
  private start = 0;

  constructor(readonly capacity: number) {}

  add(entry: Omit<JournalEntry, "id" | "seq">): JournalEntry {
    const seq = this.next++;
    const full = { id: `req_${seq}`, seq, ...entry };
    if (this.entries.length < this.capacity) this.entries.push(full);
    else {
      this.entries[this.start] = full;
      this.start = (this.start + 1) % this.capacity;
    }
    return full;
  }

  /** Oldest first. */
  list(filter: JournalFilter = {}): JournalEntry[] {
    const ordered = [...this.entries.slice(this.start), ...this.entries.slice(0, this.start)];
    const sinceSeq = filter.since && /^req_\d+$/.test(filter.since) ? Number(filter.since.slice(4)) : undefined;
    const sinceTime = filter.since && sinceSeq === undefined ? Date.parse(filter.since) : undefined;
    const out = ordered.filter(
      (e) =>
        (filter.session === undefined || e.session === filter.session) &&
        (filter.merchant === undefined || e.merchant === filter.merchant) &&
        (sinceSeq === undefined || e.seq > sinceSeq) &&
        (sinceTime === undefined || Date.parse(e.time) > sinceTime),
    );
    if (filter.limit === undefined) return out;
    // With `since`, a page forward (the next N); without, the latest N.
    return filter.since !== undefined ? out.slice(0, filter.limit) : out.slice(-filter.limit);
  }

  get size(): number {
    return this.entries.length;
  }

  clear(): void {
    this.entries.length = 0;
    this.start = 0;
  }
}
