import type { JournalEntry } from "./journal.js";
import type { Check } from "./findings/common.js";
import type { Finding } from "./findings/finding.js";
import {
  conflictingCredentials,
  credentialsInQuery,
  credentialsOfOtherSession,
  deprecatedLoginUsed,
  jwtOnPaymentInit,
  missingCredentials,
  paymentTokenOnBearerEndpoint,
} from "./findings/misuse.js";
import { unprovenIdentity } from "./findings/identity.js";
import { wrongBasePath } from "./findings/paths.js";
import { hammeringAfterError, retryIgnoresRetryAfter } from "./findings/retries.js";
import { expiredTokenReused, noProactiveRenewal, tokenPerCall } from "./findings/tokens.js";

/**
 * The integration report: what the integration did wrong, read from the journal (see Finding).
 */
export type { Finding } from "./findings/finding.js";

/** Every check, each a pure function of the entries giving at most one finding per merchant. */
export const CHECKS: readonly Check[] = [
  tokenPerCall,
  expiredTokenReused,
  noProactiveRenewal,
  jwtOnPaymentInit,
  paymentTokenOnBearerEndpoint,
  deprecatedLoginUsed,
  credentialsInQuery,
  conflictingCredentials,
  retryIgnoresRetryAfter,
  hammeringAfterError,
  missingCredentials,
  credentialsOfOtherSession,
  wrongBasePath,
];

const RANK: Record<Finding["severity"], number> = { error: 0, warning: 1, info: 2 };

/**
 * The findings over these entries: errors first, then warnings, then info; each by its first
 * evidence. Only requests whose merchant proved who it is (or that named none) are judged: a request
 * that merely named a merchant could come from anyone, so it is reported apart, as `info`.
 */
export function analyze(entries: readonly JournalEntry[]): Finding[] {
  const judged = entries.filter((e) => !e.unverified);
  const findings = [...CHECKS.flatMap((check) => check(judged)), ...unprovenIdentity(entries.filter((e) => e.unverified))];
  return findings.sort((a, b) => RANK[a.severity] - RANK[b.severity] || firstSeq(a) - firstSeq(b));
}

function firstSeq(f: Finding): number {
  const n = Number(/^req_(\d+)$/.exec(f.evidence[0] ?? "")?.[1]);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}
