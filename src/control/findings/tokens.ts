import type { JournalEntry } from "../journal.js";
import type { Finding } from "./finding.js";
import { byMerchant, evidenceOf, isExchange, isProtectedCall, plural, sandboxMs, subject, type Check } from "./common.js";

/** How the access token is handled over time: reused, renewed in time, dropped when refused. */

/** token_per_call fires from this many successful exchanges … */
export const TOKEN_PER_CALL_MIN_EXCHANGES = 3;
/** … when there is at least this many exchanges per protected call. */
export const TOKEN_PER_CALL_RATIO = 0.5;

/** Refusals after which a token can never work again, so presenting it again is a bug. */
export const DEAD_TOKEN_CODES: ReadonlySet<string> = new Set(["token_expired", "token_revoked", "merchant_disabled", "token_unknown_kid"]);

/**
 * A renewal counts as a token per call only while the token it replaces was still good: not once
 * this share of its lifetime had passed (sandbox clock), nor after it was refused for good.
 */
export const RENEWAL_DUE_SHARE = 0.5;

/**
 * A new token for (nearly) every protected call instead of one reused token. Renewals the token's
 * age or a refusal called for are not counted: the sandbox or the test forced those (an expiry, a
 * revocation, a key rotation, a disabled merchant, a clock moved past the token's lifetime).
 */
export const tokenPerCall: Check = (entries) => {
  const out: Finding[] = [];
  for (const [merchant, group] of byMerchant(entries)) {
    const unneeded = unneededExchanges(group);
    const calls = group.filter(isProtectedCall).length;
    if (unneeded.length >= TOKEN_PER_CALL_MIN_EXCHANGES && unneeded.length >= TOKEN_PER_CALL_RATIO * calls) {
      out.push({
        code: "token_per_call",
        severity: "warning",
        message: `${subject(merchant)} got ${plural(unneeded.length, "new access token")} for ${plural(calls, "protected call")}. Get one token from POST /api/v2/auth/token, cache it and reuse it for every call until shortly before it expires (expires_in), instead of asking for a new one per call.`,
        evidence: evidenceOf(unneeded),
      });
    }
  }
  return out;
};

/** The exchanges made while the token before was still good (the first one included). */
function unneededExchanges(group: readonly JournalEntry[]): JournalEntry[] {
  const out: JournalEntry[] = [];
  let previous: JournalEntry | undefined;
  let refusedForGood = false;
  for (const e of group) {
    if (isExchange(e)) {
      if (!refusedForGood && !(previous && renewalDue(previous, e))) out.push(e);
      previous = e;
      refusedForGood = false;
    } else if (e.presentedTokenId !== undefined && e.code !== undefined && DEAD_TOKEN_CODES.has(e.code)) {
      refusedForGood = true;
    }
  }
  return out;
}

/** The token `issuing` got had run RENEWAL_DUE_SHARE of its lifetime when `renewal` came. */
function renewalDue(issuing: JournalEntry, renewal: JournalEntry): boolean {
  if (issuing.tokenExpiresAt === undefined) return false;
  const issued = sandboxMs(issuing);
  return sandboxMs(renewal) - issued >= RENEWAL_DUE_SHARE * (Date.parse(issuing.tokenExpiresAt) - issued);
}

/** A token presented again after a refusal that says it can never work again. */
export const expiredTokenReused: Check = (entries) => {
  const out: Finding[] = [];
  for (const [merchant, group] of byMerchant(entries)) {
    const refusedBy = new Map<string, JournalEntry>();
    const evidence: JournalEntry[] = [];
    const codes = new Set<string>();
    for (const e of group) {
      const jti = e.presentedTokenId;
      if (jti === undefined) continue;
      const refusal = refusedBy.get(jti);
      if (refusal) {
        evidence.push(refusal, e);
        codes.add(refusal.code!);
      } else if (e.code !== undefined && DEAD_TOKEN_CODES.has(e.code)) {
        refusedBy.set(jti, e);
      }
    }
    if (evidence.length > 0) {
      out.push({
        code: "expired_token_reused",
        severity: "error",
        message: `${subject(merchant)} presented an access token again after it had been refused (${[...codes].sort().join(", ")}). When a call gets 401 invalid_token, drop the cached token, get a new one from POST /api/v2/auth/token and retry once with it; never send the refused token again.`,
        evidence: evidenceOf(evidence),
      });
    }
  }
  return out;
};

/**
 * Renewal only after a call failed with token_expired. Only tokens the journal shows the merchant
 * getting from the token endpoint count (it knew their expires_in), and only when the client could
 * have renewed in time: not when a scenario rule fired on the refusal or issued the token already
 * expired, nor when the journal says the sandbox or the test forced the expiry (`tokenExpiry`: an
 * early expiry, a clock jump over the token's renewal window). Then renewing on the 401 is right.
 */
export const noProactiveRenewal: Check = (entries) => {
  const out: Finding[] = [];
  for (const [merchant, group] of byMerchant(entries)) {
    const issuedBy = new Map<string, JournalEntry>();
    const evidence: JournalEntry[] = [];
    let pending: JournalEntry[] = [];
    for (const e of group) {
      if (isExchange(e)) {
        if (pending.length > 0) evidence.push(...pending, e);
        pending = [];
        issuedBy.set(e.tokenId!, e);
        continue;
      }
      if (e.code !== "token_expired" || e.rules?.length || e.tokenExpiry || e.presentedTokenId === undefined) continue;
      const issuing = issuedBy.get(e.presentedTokenId);
      if (issuing && !issuing.rules?.length) pending.push(e);
    }
    if (evidence.length > 0) {
      out.push({
        code: "no_proactive_renewal",
        severity: "warning",
        message: `${subject(merchant)} renewed its access token only after a call failed with 401 token_expired. Keep the token's expiry (expires_in from the token response) and get a new token shortly before it runs out, for example when 90% of its lifetime has passed, so that no call fails on an expired token.`,
        evidence: evidenceOf(evidence),
      });
    }
  }
  return out;
};
