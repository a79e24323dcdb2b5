import { isJwt } from "./infer.js";
import { accessTokenNamed, expOf, jwtCandidates } from "./provider-jwt.js";
import {
  bearer,
  type Call,
  type ProbeCredentials,
  type Prober,
  probeLogin,
  probePaymentInit,
  probePaymentInitRefusals,
  probeProtectedRoute,
  probeTokenRoute,
} from "./probe-routes.js";
import { AnswerTooLarge, type RawAnswer, readAnswer } from "./read-answer.js";
import { type Answer, type Observation, type Observations, type ProbeName, REPEATED_PROBES, type Skipped } from "./observations.js";

/**
 * The requests calibrate sends to the provider's test environment: a fixed, documented, safe set
 * (README, "Learn a profile from your provider"), one at a time, at most MAX_REQUESTS of them. Only
 * with --allow-writes does it send a request that can create anything (payment/init with the
 * payment token). A 429 stops it: it waits what Retry-After asks (up to MAX_RETRY_AFTER_S) and
 * sends that probe once more, or gives up.
 */

export interface ProbeOptions extends ProbeCredentials {
  url: string;
  /** Injected for tests; real time otherwise. */
  sleep?: (ms: number) => Promise<void>;
  timeoutMs?: number;
  /** The most bytes of one answer read, as received and once decoded (--max-answer-bytes). */
  maxAnswerBytes?: number;
}

/** The most probes sent (21 kinds, REPEATED_PROBES twice, with every optional flag given). */
export const MAX_PROBES = 29;
/** JWTs of one token answer tried on the protected route when their names do not say which is the access token. */
export const MAX_ACCESS_TRIALS = 3;
/** Probes, trials, and one retry after a 429 for two of them. */
export const MAX_REQUESTS = MAX_PROBES + MAX_ACCESS_TRIALS + 2;
export const MAX_RETRY_AFTER_S = 60;
/** A token or refusal answer is a few KB; a megabyte leaves room for any real one. */
export const DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024;
export const DEFAULT_PROTECTED_PATH = "/api/v2/payment/status";

/** The provider could not be reached, or stopped answering (exit 2). */
export class ProviderUnreachable extends Error {}

export interface ProbeResult {
  observations: Observations;
  /** Every secret value calibrate handled or received: none may appear in what it writes or prints. */
  secrets: string[];
  /** Requests sent, repeats and retries included. */
  sent: number;
}

function prober(o: ProbeOptions, base: string): Prober {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const secrets = [o.apiSecret, o.paymentToken, o.login?.password, o.expiredToken, o.revokedToken].filter((s): s is string => !!s);
  const limits = { timeoutMs: o.timeoutMs ?? 15_000, maxBytes: o.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES };
  const observed: Observation[] = [];
  const repeats: Observation[] = [];
  const skipped: Skipped[] = [];
  let sentCount = 0;
  const once = async (call: Call): Promise<Answer> => {
    for (let attempt = 0; ; attempt++) {
      if (sentCount >= MAX_REQUESTS)
        throw new ProviderUnreachable(`calibrate stops after ${MAX_REQUESTS} requests (the provider kept asking it to wait).`);
      sentCount++;
      const answer = await request(base, call, limits);
      if (answer.status === 429) {
        const wait = retryAfterSeconds(answer.headers["retry-after"]);
        if (attempt === 0 && wait !== undefined && wait <= MAX_RETRY_AFTER_S) {
          await sleep(wait * 1000);
          continue;
        }
        throw new ProviderUnreachable(
          `The provider answered 429 Too Many Requests to ${call.probe} (${call.method} ${call.path})${wait === undefined ? " without a usable Retry-After" : `, asking to wait ${wait} s`}; calibrate stopped. Run it again later.`,
        );
      }
      for (const token of tokensIn(answer.json)) if (!secrets.includes(token)) secrets.push(token);
      return answer;
    }
  };
  return {
    once,
    async send(probe) {
      const answer = await once(probe);
      observed.push({ probe: probe.probe, sent: probe.sent, path: probe.path, answer });
      if (REPEATED_PROBES.includes(probe.probe)) {
        const again = await once({ ...probe, init: probe.again ?? probe.init });
        repeats.push({ probe: probe.probe, sent: probe.sent, path: probe.path, answer: again });
      }
      return answer;
    },
    skip: (probe, why) => skipped.push({ probe, why }),
    observed,
    repeats,
    skipped,
    secrets,
    sentCount: () => sentCount,
  };
}

export async function probeProvider(o: ProbeOptions): Promise<ProbeResult> {
  const base = o.url.replace(/\/+$/, "");
  const p = prober(o, base);
  const startedAt = Date.now();
  const first = await probeTokenRoute(p, o);
  const access = await accessTokenOf(first.json, (jwt) =>
    p.once({ probe: "protected_fresh", method: "GET", path: o.protectedPath, init: bearer(jwt) }),
  );
  await probeProtectedRoute(p, o, access?.jwt);
  await probePaymentInitRefusals(p, access?.jwt);
  await probeLogin(p, o);
  const paymentInitSent = await probePaymentInit(p, o, startedAt);
  return {
    observations: {
      url: base,
      startedAt,
      observed: p.observed,
      repeats: p.repeats,
      skipped: p.skipped,
      ...(paymentInitSent && { paymentInitSent }),
      ...(o.login && { loginEmail: o.login.email }),
      ...(expOf(o.expiredToken) !== undefined && { expiredTokenExp: expOf(o.expiredToken) }),
      ...(access && { accessTokenPath: access.path }),
    },
    secrets: p.secrets,
    sent: p.sentCount(),
  };
}

async function request(base: string, call: Call, limits: { timeoutMs: number; maxBytes: number }): Promise<Answer> {
  const { probe, method, path, init } = call;
  let raw: RawAnswer;
  try {
    raw = await readAnswer(base + path, { method, headers: { accept: "application/json", ...init.headers }, body: init.body, ...limits });
  } catch (e) {
    if (e instanceof AnswerTooLarge) throw new ProviderUnreachable(tooLargeMessage(e, call, limits.maxBytes));
    const cause = (e as { code?: string }).code ?? (e as Error).name;
    if (/^Z_|BROTLI/.test(cause))
      throw new ProviderUnreachable(
        `The provider's answer to ${probe} (${method} ${path}) cannot be decoded as its Content-Encoding says (${cause}); calibrate stopped. Check --url.`,
      );
    throw new ProviderUnreachable(`Cannot reach ${base} (${method} ${path}: ${cause}). Check --url and that the provider's test environment is up.`);
  }
  return answerOf(raw);
}

/** An answer as calibrate reads it: its media type, its body parsed as JSON or kept as text. */
export function answerOf(raw: RawAnswer): Answer {
  const { headers } = raw;
  const text = raw.body.toString("utf8");
  let json: unknown;
  let notJson = false;
  if (text.trim() !== "") {
    try {
      json = JSON.parse(text);
    } catch {
      notJson = true;
    }
  }
  const contentType = headers["content-type"]?.split(";")[0]?.trim().toLowerCase() || undefined;
  return { status: raw.status, contentType, headers, json, notJson, ...(notJson && { text }), empty: raw.body.length === 0 };
}

/** Which probe, which limit, and the flag that raises it: a token or refusal answer is a few KB. */
function tooLargeMessage(e: AnswerTooLarge, call: Call, max: number): string {
  const what = e.limit === "received" ? `is over ${max} bytes` : `inflates to over ${max} bytes once its Content-Encoding (${e.encoding}) is undone`;
  return `The provider's answer to ${call.probe} (${call.method} ${call.path}) ${what}, the limit of --max-answer-bytes; calibrate stopped reading it and sent nothing more. Check --url, or raise --max-answer-bytes if its answers really are that large.`;
}

/**
 * The access token of the token answer: the JWT its name says (access_token beside refresh_token
 * and id_token), or, when names do not tell (`{"a": <JWT>, "b": <JWT>}`), the first the protected
 * route accepts, tried in jwtCandidates' order (one request each, before the probes proper).
 */
async function accessTokenOf(json: unknown, tryOn: (jwt: string) => Promise<Answer>): Promise<{ path: string; jwt: string } | undefined> {
  const candidates = jwtCandidates(json);
  if (accessTokenNamed(json)) return candidates[0];
  for (const candidate of candidates.slice(0, MAX_ACCESS_TRIALS)) if ((await tryOn(candidate.jwt)).status < 300) return candidate;
  return candidates[0];
}

/** Retry-After as seconds from now: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The JWTs and opaque token-like strings in an answer, so they are never echoed. */
function tokensIn(json: unknown): string[] {
  const found: string[] = [];
  const walk = (v: unknown, key: string) => {
    if (typeof v === "string") {
      if (isJwt(v) || (/token|secret|refresh/i.test(key) && v.length >= 16 && !/\s/.test(v))) found.push(v);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, key);
    } else if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(json, "");
  return found;
}
