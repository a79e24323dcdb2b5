import type { JournalEntry } from "../journal.js";
import type { Finding } from "./finding.js";

/**
 * Helpers shared by the findings: every finding is a pure function of the journal entries (oldest
 * first) that returns at most one finding per merchant.
 */
export type Check = (entries: readonly JournalEntry[]) => Finding[];

/** Entries without a merchant (nothing on the request said who sent it) are grouped together. */
export const UNATTRIBUTED = "";

/**
 * Entries without a merchant sent under a session's base URL are that session's client's: grouped
 * per session, and named so (a NUL byte keeps the key apart from any merchant id).
 */
const SESSION_CLIENT = "\u0000session:";

/** The entries of each merchant, in request order; merchants in order of their first request. */
export function byMerchant(entries: readonly JournalEntry[]): Map<string, JournalEntry[]> {
  const groups = new Map<string, JournalEntry[]>();
  for (const e of inOrder(entries)) {
    const key = e.merchant ?? (e.session !== undefined && e.viaSessionUrl ? SESSION_CLIENT + e.session : UNATTRIBUTED);
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  return groups;
}

/** Oldest first by request number, whatever order the caller passed. */
export function inOrder(entries: readonly JournalEntry[]): JournalEntry[] {
  return [...entries].sort((a, b) => a.seq - b.seq);
}

/** Who did it, for the start of a message. */
export function subject(merchant: string): string {
  if (merchant === UNATTRIBUTED) return "A client the sandbox could not attribute to a merchant";
  if (merchant.startsWith(SESSION_CLIENT)) return `The client of session '${merchant.slice(SESSION_CLIENT.length)}'`;
  return `Merchant '${merchant}'`;
}

/** Request ids in request order, each once. */
export function evidenceOf(entries: Iterable<JournalEntry>): string[] {
  const unique = new Map<number, string>();
  for (const e of entries) unique.set(e.seq, e.id);
  return [...unique.entries()].sort((a, b) => a[0] - b[0]).map(([, id]) => id);
}

/** Milliseconds on the scenario clock when the request arrived. */
export function sandboxMs(e: JournalEntry): number {
  return Date.parse(e.sandboxTime);
}

/** A successful token exchange: the token endpoint issued an access token. */
export function isExchange(e: JournalEntry): boolean {
  return e.endpoint === "token" && e.status === 200 && e.tokenId !== undefined;
}

/** A call to a group protected by the access token. */
export function isProtectedCall(e: JournalEntry): boolean {
  return e.endpoint === "payment" || e.endpoint === "cashout";
}

/** A request that did not succeed: refused, failed, or its connection dropped (status 0). */
export function isFailure(e: JournalEntry): boolean {
  return e.status === 0 || e.status >= 400;
}

/** How the report names an endpoint. */
export function endpointLabel(endpoint: string): string {
  switch (endpoint) {
    case "token":
      return "POST /api/v2/auth/token";
    case "payment":
      return "/api/v2/payment/*";
    case "cashout":
      return "/api/v2/cashout/*";
    case "payment-init":
      return "POST /api/v2/payment/init";
    case "login":
      return "POST /api/login_check";
    case "jwks":
      return "GET /.well-known/jwks.json";
    default:
      return `the '${endpoint}' endpoint`;
  }
}

/**
 * One finding per merchant for the entries that `matches`: the simple findings, where each
 * offending request is its own evidence.
 */
export function perRequest(
  code: string,
  severity: Finding["severity"],
  matches: (e: JournalEntry) => boolean,
  message: (merchant: string, hits: JournalEntry[]) => string,
): Check {
  return (entries) => {
    const out: Finding[] = [];
    for (const [merchant, group] of byMerchant(entries)) {
      const hits = group.filter(matches);
      if (hits.length > 0) out.push({ code, severity, message: message(merchant, hits), evidence: evidenceOf(hits) });
    }
    return out;
  };
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
