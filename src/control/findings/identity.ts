import type { JournalEntry } from "../journal.js";
import type { Finding } from "./finding.js";
import { byMerchant, evidenceOf, plural } from "./common.js";

/**
 * Requests that named a merchant without proving it: a wrong api_secret or password, a JWT no key
 * of this sandbox signed, or a request refused for its form before its credentials counted
 * (endpoints/request-form.ts: a no-cors page can send those with published credentials). Anyone can send those, so they never count against the merchant; they
 * are shown as `info` only, for the team whose client sends the wrong credentials to find out why.
 */
export function unprovenIdentity(unverified: readonly JournalEntry[]): Finding[] {
  const out: Finding[] = [];
  for (const [merchant, hits] of byMerchant(unverified)) {
    out.push({
      code: "unproven_identity",
      severity: "info",
      message: `${plural(hits.length, "request")} named merchant '${merchant}' without proving it (a wrong api_secret or password, a token that no key of this sandbox signed, or a request refused for its form: its method, Content-Type, body, or a credential sent two ways). They fired none of its scenario rules and count in none of its findings. If they are your integration's, check the credentials it sends and how (each refusal says what was wrong): use the merchant's current api_secret and the access_token exactly as issued.`,
      evidence: evidenceOf(hits),
    });
  }
  return out;
}
