import { randomBytes } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from "jose";
import { isJwt } from "./infer.js";
import { accessTokenNamed, expOf, jwtCandidates } from "./provider-jwt.js";
import { AnswerTooLarge, type RawAnswer, readAnswer } from "./read-answer.js";
import { type Answer, type Observation, type Observations, type ProbeName, REPEATED_PROBES, type Skipped } from "./observations.js";

/**
 * The requests calibrate sends to the provider's test environment: a fixed, documented, safe set
 * (README, "Learn a profile from your provider"), one at a time, at most MAX_REQUESTS of them. Only
 * with --allow-writes does it send a request that can create anything (payment/init with the
 * payment token). A 429 stops it: it waits what Retry-After asks (up to MAX_RETRY_AFTER_S) and
 * sends that probe once more, or gives up.
 */

export interface ProbeOptions {
  url: string;
  apiKey: string;
  apiSecret: string;
  paymentToken?: string | undefined;
  login?: { email: string; password: string } | undefined;
  expiredToken?: string | undefined;
  /** A token the provider revoked (--revoked-token), to observe that answer. */
  revokedToken?: string | undefined;
  protectedPath: string;
  allowWrites: boolean;
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

type Init = { headers?: Record<string, string>; body?: string };

/** One request to the provider: which probe it is for, and what is sent. */
interface Call {
  probe: ProbeName;
  method: string;
  path: string;
  init: Init;
}

/** A probe: its request, what the table says was sent, and for a repeated probe another second request. */
interface Probe extends Call {
  sent: string;
  again?: Init;
}

/** One calibration's requests and what they observed, within the run's budget of MAX_REQUESTS. */
interface Prober {
  /** One request, waiting once as a 429's Retry-After asks; not an observation (the access-token trials). */
  once(call: Call): Promise<Answer>;
  /** A probe, observed; a repeated one (REPEATED_PROBES) is sent twice, and what differs is per-request. */
  send(probe: Probe): Promise<Answer>;
  skip(probe: ProbeName, why: string): void;
  readonly observed: Observation[];
  readonly repeats: Observation[];
  readonly skipped: Skipped[];
  readonly secrets: string[];
  sentCount(): number;
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

const TOKEN = "/api/v2/auth/token";
const INIT = "/api/v2/payment/init";
const LOGIN = "/api/login_check";
const json = (body: unknown): Init => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const bearer = (token: string): Init => ({ headers: { authorization: `Bearer ${token}` } });
/** payment/init with a bearer token and an empty order: even a provider that took the token could not create a payment from it. */
const emptyOrder = (token: string): Init => ({ headers: { ...bearer(token).headers, "content-type": "application/json" }, body: "{}" });

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

/** The token route: both ways of sending the credentials, and each way of getting them wrong. The first answer is the token's. */
async function probeTokenRoute(p: Prober, o: ProbeOptions): Promise<Answer> {
  const post = (probe: ProbeName, sent: string, init: Init) => p.send({ probe, sent: `POST ${TOKEN}, ${sent}`, method: "POST", path: TOKEN, init });
  const first = await post("token_body", "api_key and api_secret in the JSON body", json({ api_key: o.apiKey, api_secret: o.apiSecret }));
  await post("token_headers", "X-Api-Key and X-Api-Secret headers, no body", { headers: { "x-api-key": o.apiKey, "x-api-secret": o.apiSecret } });
  await post("wrong_secret", "the api_key with a wrong api_secret", json({ api_key: o.apiKey, api_secret: "calibrate-wrong-secret" }));
  await post("unknown_key", "an api_key no merchant has", json({ api_key: "calibrate-unknown-key", api_secret: "calibrate-unknown-secret" }));
  await post("missing_secret", "the api_key without api_secret", json({ api_key: o.apiKey }));
  await post("missing_key", "an api_secret without api_key", json({ api_secret: "calibrate-unknown-secret" }));
  await post("malformed_json", "a body that is not valid JSON", { headers: { "content-type": "application/json" }, body: '{"api_key": ' });
  return first;
}

/** The protected route: with the fresh token, and with every kind of wrong credential. */
async function probeProtectedRoute(p: Prober, o: ProbeOptions, fresh: string | undefined): Promise<void> {
  const path = o.protectedPath;
  const get = (probe: ProbeName, sent: string, init: Init) => p.send({ probe, sent: `GET ${path} ${sent}`, method: "GET", path, init });
  if (fresh) await get("protected_fresh", "with the fresh token", bearer(fresh));
  else p.skip("protected_fresh", "no token was issued");
  await get("no_authorization", "without Authorization", {});
  await get("other_scheme", "with Authorization: Basic", {
    headers: { authorization: `Basic ${Buffer.from("calibrate:calibrate").toString("base64")}` },
  });
  await get("empty_bearer", "with Authorization: Bearer and no token", { headers: { authorization: "Bearer" } });
  if (o.paymentToken) await get("payment_token_protected", "with the payment token as its bearer token", bearer(o.paymentToken));
  else p.skip("payment_token_protected", "no --payment-token: that answer is inferred from the unknown payment token's");
  await get("malformed_token", "with a token that is not a JWT", bearer("calibrate-not-a-jwt"));
  await get("foreign_jwt", "with a JWT signed by a key of calibrate's", bearer(await foreignJwt(fresh)));
  if (o.expiredToken) await get("expired_token", "with --expired-token", bearer(o.expiredToken));
  else p.skip("expired_token", "no --expired-token: the expired answer is inferred from the foreign-key JWT's");
  if (o.revokedToken) await get("revoked_token", "with --revoked-token", bearer(o.revokedToken));
  else p.skip("revoked_token", "no --revoked-token: the revoked answer is inferred from the foreign-key JWT's");
}

/** payment/init's refusals: the access token where the payment token belongs, and a payment token no merchant has. */
async function probePaymentInitRefusals(p: Prober, fresh: string | undefined): Promise<void> {
  if (fresh)
    await p.send({
      probe: "payment_init_jwt",
      sent: `POST ${INIT} with the JWT (and an empty order)`,
      method: "POST",
      path: INIT,
      init: emptyOrder(fresh),
    });
  else p.skip("payment_init_jwt", "no token was issued");
  await p.send({
    probe: "wrong_payment_token",
    sent: `POST ${INIT} with a payment token no merchant has (and an empty order)`,
    method: "POST",
    path: INIT,
    init: emptyOrder("calibrate-unknown-payment-token"),
  });
}

/** The deprecated login, with --login: its answer, and its refusal of a wrong password. */
async function probeLogin(p: Prober, o: ProbeOptions): Promise<void> {
  if (!o.login) {
    p.skip("login", "no --login: the login's answer is not in the profile");
    return;
  }
  const { email, password } = o.login;
  await p.send({ probe: "login", sent: `POST ${LOGIN} with --login`, method: "POST", path: LOGIN, init: json({ username: email, password }) });
  await p.send({
    probe: "wrong_password",
    sent: `POST ${LOGIN} with --login's e-mail and a wrong password`,
    method: "POST",
    path: LOGIN,
    init: json({ username: email, password: "calibrate-wrong-password" }),
  });
}

/** payment/init's success, only with --allow-writes and --payment-token: it creates two test payments. What was sent, or undefined. */
async function probePaymentInit(p: Prober, o: ProbeOptions, startedAt: number): Promise<Record<string, string | number> | undefined> {
  if (!o.allowWrites || !o.paymentToken) {
    p.skip(
      "payment_init",
      o.allowWrites
        ? "no --payment-token: payment/init's success is not in the profile"
        : "a write: sent only with --allow-writes (and --payment-token)",
    );
    return undefined;
  }
  const order = { amount: 100, currency: "EUR", order_id: `calibrate-${startedAt}` };
  const headers = { ...bearer(o.paymentToken).headers, "content-type": "application/json" };
  await p.send({
    probe: "payment_init",
    sent: `POST ${INIT} with the payment token (creates two test payments)`,
    method: "POST",
    path: INIT,
    init: { headers, body: JSON.stringify(order) },
    again: { headers, body: JSON.stringify({ ...order, order_id: `calibrate-${startedAt}-2` }) },
  });
  return order;
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

/**
 * A JWT the provider's keys did not sign: the same alg, typ and claims as its own token (so it is
 * refused for its signature, not its shape), signed by a key calibrate makes up and names.
 */
async function foreignJwt(fresh: string | undefined): Promise<string> {
  let header: Record<string, unknown> = {};
  let payload: Record<string, unknown> = {};
  if (fresh) {
    header = decodeProtectedHeader(fresh) as Record<string, unknown>;
    payload = decodeJwt(fresh) as Record<string, unknown>;
  }
  const alg = ["RS256", "ES256", "HS256", "PS256", "EdDSA"].includes(String(header.alg)) ? String(header.alg) : "RS256";
  const key = alg === "HS256" ? new Uint8Array(randomBytes(32)) : (await generateKeyPair(alg)).privateKey;
  // The times of the provider's own token, on the provider's clock: a provider that checks expiry
  // before the signature (Lexik) must refuse it for its signature, however its clock differs from ours.
  const now = Math.floor(Date.now() / 1000);
  const times = typeof payload.iat === "number" && typeof payload.exp === "number" ? {} : { iat: now, exp: now + 300 };
  // A kid only where the provider's own tokens name one: a kid-less provider sees its own header shape.
  const kid = fresh === undefined || typeof header.kid === "string" ? { kid: "merchant-sandbox-calibrate-foreign-key" } : {};
  return new SignJWT({ ...payload, ...times })
    .setProtectedHeader({ alg, ...kid, ...(typeof header.typ === "string" && { typ: header.typ }) })
    .sign(key);
}
