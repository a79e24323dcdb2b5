import type { JournalEntry } from "../journal.js";
import type { Finding } from "./finding.js";
import { byMerchant, endpointLabel, evidenceOf, isFailure, plural, sandboxMs, subject, type Check } from "./common.js";

/** How the integration retries: Retry-After honoured, failures not hammered. */

/** hammering_after_error fires on this many failed tries in a row of the same request … */
export const HAMMER_MIN_RUN = 3;
/** … each sent less than this long (sandbox clock) after the previous one. */
export const HAMMER_MAX_GAP_MS = 2000;

/** The entries of one merchant, per endpoint, in request order; endpoints in order of first use. */
function byEndpoint(group: readonly JournalEntry[]): Map<string, JournalEntry[]> {
  const out = new Map<string, JournalEntry[]>();
  for (const e of group) {
    const list = out.get(e.endpoint);
    if (list) list.push(e);
    else out.set(e.endpoint, [e]);
  }
  return out;
}

function isRetryAfterAnswer(e: JournalEntry): boolean {
  return e.retryAfter !== undefined && (e.status === 429 || e.status === 503);
}

/** The same endpoint called again before a 429/503's Retry-After had passed on the sandbox clock. */
export const retryIgnoresRetryAfter: Check = (entries) => {
  const out: Finding[] = [];
  for (const [merchant, group] of byMerchant(entries)) {
    const evidence: JournalEntry[] = [];
    let example: { answer: JournalEntry; retry: JournalEntry } | undefined;
    let early = 0;
    for (const calls of byEndpoint(group).values()) {
      for (let i = 0; i + 1 < calls.length; i++) {
        const answer = calls[i]!;
        const retry = calls[i + 1]!;
        if (!isRetryAfterAnswer(answer) || sandboxMs(retry) >= sandboxMs(answer) + answer.retryAfter! * 1000) continue;
        evidence.push(answer, retry);
        early++;
        if (!example || retry.seq < example.retry.seq) example = { answer, retry };
      }
    }
    if (example) {
      const waited = (sandboxMs(example.retry) - sandboxMs(example.answer)) / 1000;
      out.push({
        code: "retry_ignores_retry_after",
        severity: "error",
        message: `${subject(merchant)} retried before Retry-After had passed (${plural(early, "early retry", "early retries")}; after a ${example.answer.status} with Retry-After: ${example.answer.retryAfter} on ${endpointLabel(example.answer.endpoint)} it called again ${waited} s later on the sandbox clock). Wait at least the Retry-After seconds before calling that endpoint again, and back off exponentially when an error carries no Retry-After.`,
        evidence: evidenceOf(evidence),
      });
    }
  }
  return out;
};

/** Runs of failed tries of one request, each close on the heels of the previous one. */
function hammeredRuns(calls: readonly JournalEntry[]): JournalEntry[][] {
  const runs: JournalEntry[][] = [];
  let run: JournalEntry[] = [];
  for (const e of calls) {
    const previous = run[run.length - 1];
    if (!isFailure(e)) {
      run = [];
      continue;
    }
    if (previous && sandboxMs(e) - sandboxMs(previous) >= HAMMER_MAX_GAP_MS) run = [];
    run.push(e);
    if (run.length === HAMMER_MIN_RUN) runs.push(run);
  }
  return runs;
}

/**
 * The entries of one merchant per request (method, path and endpoint), in request order; requests in
 * order of first use. Requests to paths the API does not serve are left out: three different
 * mistyped paths are one mistake, the base URL, which wrong_base_path names.
 */
function bySameRequest(group: readonly JournalEntry[]): Map<string, JournalEntry[]> {
  const out = new Map<string, JournalEntry[]>();
  for (const e of group) {
    if (e.endpoint === "unknown") continue;
    const key = `${e.endpoint} ${e.method} ${e.path}`;
    const list = out.get(key);
    if (list) list.push(e);
    else out.set(key, [e]);
  }
  return out;
}

/** Three or more failed tries in a row of the same request (method, path and endpoint) without backing off. */
export const hammeringAfterError: Check = (entries) => {
  const out: Finding[] = [];
  for (const [merchant, group] of byMerchant(entries)) {
    const evidence: JournalEntry[] = [];
    const endpoints: string[] = [];
    for (const calls of bySameRequest(group).values()) {
      const runs = hammeredRuns(calls);
      if (runs.length === 0) continue;
      const label = endpointLabel(calls[0]!.endpoint);
      if (!endpoints.includes(label)) endpoints.push(label);
      for (const run of runs) evidence.push(...run);
    }
    if (evidence.length > 0) {
      out.push({
        code: "hammering_after_error",
        severity: "error",
        message: `${subject(merchant)} sent ${evidence.length} failing requests in quick succession to ${endpoints.join(" and ")} (${HAMMER_MIN_RUN} or more in a row refused or answered 429/503, each less than ${HAMMER_MAX_GAP_MS / 1000} s after the previous one on the sandbox clock). Do not resend a refused request unchanged: fix the request or the credentials first; retry 429, 503 and dropped connections with exponential backoff and jitter, honouring Retry-After, and give up after a few attempts.`,
        evidence: evidenceOf(evidence),
      });
    }
  }
  return out;
};
