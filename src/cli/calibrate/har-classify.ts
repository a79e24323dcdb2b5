import { parseBearerHeader } from "../../core/bearer.js";
import type { HarExchange } from "./har-read.js";
import { HarUnusable } from "./har-read.js";
import { expOf, isJwt, jwtCandidates } from "./provider-jwt.js";
import type { Observation, Observations, ProbeName, Skipped } from "./observations.js";
import { answerText, PROBE_GROUPS } from "./observations.js";

/**
 * Which probe each recorded exchange stands for, judged from what was sent and what came back, so
 * a recording of an integration's own test run gives the observations probing would (pure):
 * - the token route: credentials in the body or in headers; refused for no key, no secret, a key
 *   never accepted in the recording (unknown), else a wrong secret; a body that is not JSON;
 * - a protected route: no Authorization, another scheme, an empty Bearer, the payment token, a
 *   token that is not a JWT, a JWT past its exp when sent (expired), one the recording saw issued
 *   (revoked, or refused otherwise), any other JWT (a foreign one), and the 2xx;
 * - payment/init: the JWT, an unknown payment token, the 2xx; the login: the 2xx, a refusal.
 * The first exchange of a kind is its observation, the second its repeat (per-request values).
 */

export interface HarReading {
  observations: Observations;
  /** Every credential and token in the recording: none may reach what calibrate writes or prints. */
  secrets: string[];
  /** Exchanges of the merchant API read, and how many stood for a probe. */
  read: number;
  used: number;
}

const TOKEN = /\/api\/v2\/auth\/token$/;
const INIT = /\/api\/v2\/payment\/init$/;
const LOGIN = /\/api\/login_check$/;
const PROTECTED = /\/api\/v2\/(payment|cashout)\/./;

/** What a probe would have sent, for the table's "not in the recording" rows. */
const PROBE_SENDS: Partial<Record<ProbeName, string>> = {
  wrong_secret: "the token exchange with a wrong api_secret",
  unknown_key: "an api_key no merchant has",
  missing_secret: "no api_secret",
  missing_key: "no api_key",
  malformed_json: "a token body that is not JSON",
  no_authorization: "a protected call without Authorization",
  other_scheme: "Authorization: Basic",
  empty_bearer: "Authorization: Bearer and no token",
  payment_token_protected: "the payment token on a protected route",
  malformed_token: "a token that is not a JWT",
  foreign_jwt: "a JWT signed by another key",
  expired_token: "an expired token (--expired-token)",
  revoked_token: "a revoked token (--revoked-token)",
  payment_init_jwt: "the JWT on payment/init",
  wrong_payment_token: "an unknown payment token",
  login: "the login (--login)",
  wrong_password: "a wrong password",
  payment_init: "payment/init with the payment token (--allow-writes)",
};

export function observationsFromHar(all: readonly HarExchange[], file: string): HarReading {
  const api = all.filter((x) => [TOKEN, INIT, LOGIN, PROTECTED].some((r) => r.test(x.url.pathname))).sort((a, b) => a.sentAt - b.sentAt);
  if (api.length === 0)
    throw new HarUnusable(
      `The recording ${file} holds no exchange with the merchant API (POST /api/v2/auth/token, /api/v2/payment/*, /api/login_check): record the integration's test run against the provider.`,
    );
  const known = knownValues(api);
  const observed: Observation[] = [];
  const repeats: Observation[] = [];
  let paymentInitSent: Record<string, string | number> | undefined;
  let loginEmail: string | undefined;
  let expired: { exp: number; sentAt: number } | undefined;
  for (const x of api) {
    const probe = probeOf(x, known);
    if (probe === undefined || repeats.some((r) => r.probe === probe)) continue;
    const o: Observation = {
      probe,
      sent: `${x.method} ${x.url.pathname}, recorded ${new Date(x.sentAt).toISOString()}`,
      path: x.url.pathname,
      answer: x.answer,
      at: x.sentAt,
    };
    if (observed.some((r) => r.probe === probe)) {
      repeats.push(o);
      continue;
    }
    observed.push(o);
    if (probe === "payment_init") paymentInitSent = scalarsOf(jsonOf(x.requestBody));
    if (probe === "login") loginEmail = stringAt(jsonOf(x.requestBody), "username");
    if (probe === "expired_token") expired = { exp: expOf(bearerOf(x)!)!, sentAt: x.sentAt };
  }
  const used = observed.length + repeats.length;
  const skipped: Skipped[] = (Object.keys(PROBE_GROUPS) as ProbeName[])
    .filter((p) => !observed.some((o) => o.probe === p) && PROBE_SENDS[p] !== undefined)
    .map((p) => ({ probe: p, why: `not in the recording: the probe that would observe it sends ${PROBE_SENDS[p]} (calibrate --url ...)` }));
  const first = api[0]!;
  return {
    observations: {
      url: `${first.url.origin}${first.url.pathname.replace(/\/api\/.*$/, "")}`,
      startedAt: first.sentAt,
      observed,
      repeats,
      skipped,
      ...(paymentInitSent && { paymentInitSent }),
      ...(loginEmail && { loginEmail }),
      ...(expired && { expiredTokenExp: expired.exp, expiredTokenSentAt: expired.sentAt }),
      ...(known.accessTokenPath && { accessTokenPath: known.accessTokenPath }),
    },
    secrets: [...known.secrets],
    read: api.length,
    used,
  };
}

interface Known {
  /** api_keys a token exchange succeeded with. */
  keys: Set<string>;
  /** Bearer tokens payment/init took. */
  paymentTokens: Set<string>;
  /** JWTs the token route or the login issued. */
  issued: Set<string>;
  accessTokenPath?: string;
  secrets: Set<string>;
}

/** What the whole recording tells about each value: which keys worked, which tokens were issued, every secret. */
function knownValues(api: readonly HarExchange[]): Known {
  const known: Known = { keys: new Set(), paymentTokens: new Set(), issued: new Set(), secrets: new Set() };
  const accepted = new Set(api.filter((x) => PROTECTED.test(x.url.pathname) && !INIT.test(x.url.pathname) && ok(x)).map(bearerOf));
  for (const x of api) {
    const body = jsonOf(x.requestBody);
    for (const s of [
      stringAt(body, "api_secret"),
      x.requestHeaders["x-api-secret"],
      stringAt(body, "password"),
      bearerOf(x),
      x.requestHeaders.cookie,
    ])
      if (s) known.secrets.add(s);
    if (x.answer.headers["set-cookie"]) known.secrets.add(x.answer.headers["set-cookie"]);
    for (const { jwt } of jwtCandidates(x.answer.json)) known.secrets.add(jwt);
    if (TOKEN.test(x.url.pathname) && ok(x)) {
      const key = stringAt(body, "api_key") ?? x.requestHeaders["x-api-key"];
      if (key) known.keys.add(key);
      for (const c of jwtCandidates(x.answer.json)) {
        known.issued.add(c.jwt);
        if (accepted.has(c.jwt)) known.accessTokenPath ??= c.path;
      }
    }
    if (LOGIN.test(x.url.pathname) && ok(x)) for (const c of jwtCandidates(x.answer.json)) known.issued.add(c.jwt);
    if (INIT.test(x.url.pathname) && ok(x) && bearerOf(x) && !isJwt(bearerOf(x))) known.paymentTokens.add(bearerOf(x)!);
  }
  return known;
}

function probeOf(x: HarExchange, known: Known): ProbeName | undefined {
  const path = x.url.pathname;
  if (TOKEN.test(path) && x.method === "POST") return tokenProbe(x, known);
  if (INIT.test(path) && x.method === "POST") {
    const token = bearerOf(x);
    if (token === undefined) return undefined;
    if (isJwt(token)) return "payment_init_jwt";
    return ok(x) ? "payment_init" : "wrong_payment_token";
  }
  if (LOGIN.test(path) && x.method === "POST") return ok(x) ? "login" : "wrong_password";
  if (PROTECTED.test(path)) return protectedProbe(x, known);
  return undefined;
}

function tokenProbe(x: HarExchange, known: Known): ProbeName {
  const raw = x.requestBody?.trim() ?? "";
  const body = jsonOf(raw);
  if (raw !== "" && body === undefined) return "malformed_json";
  const key = stringAt(body, "api_key") ?? x.requestHeaders["x-api-key"];
  const secret = stringAt(body, "api_secret") ?? x.requestHeaders["x-api-secret"];
  if (ok(x)) return stringAt(body, "api_key") === undefined ? "token_headers" : "token_body";
  if (!key) return "missing_key";
  if (!secret) return "missing_secret";
  return known.keys.has(key) ? "wrong_secret" : "unknown_key";
}

function protectedProbe(x: HarExchange, known: Known): ProbeName {
  // Read as the sandbox reads it (core/bearer.ts), so a recording is classified by the same rule.
  const sent = parseBearerHeader(x.requestHeaders.authorization);
  if (sent.kind === "absent") return "no_authorization";
  if (sent.kind === "not_bearer") return "other_scheme";
  if (sent.kind === "empty") return "empty_bearer";
  if (sent.kind !== "token") return "malformed_token";
  const token = sent.token;
  if (ok(x)) return "protected_fresh";
  if (known.paymentTokens.has(token)) return "payment_token_protected";
  if (!isJwt(token)) return "malformed_token";
  const exp = expOf(token);
  // Past its exp when sent, or refused in words that say so (a provider whose clock ran ahead).
  if ((exp !== undefined && exp <= x.sentAt / 1000) || saysExpired(x)) return "expired_token";
  return known.issued.has(token) ? "revoked_token" : "foreign_jwt";
}

/** A refusal whose body or challenge says the token expired. */
function saysExpired(x: HarExchange): boolean {
  return /expired|not active/i.test(answerText(x.answer));
}

const ok = (x: HarExchange) => x.answer.status >= 200 && x.answer.status < 300;

/** The request's bearer token, as the sandbox reads Authorization (core/bearer.ts). */
function bearerOf(x: HarExchange): string | undefined {
  const sent = parseBearerHeader(x.requestHeaders.authorization);
  return sent.kind === "token" ? sent.token : undefined;
}

function jsonOf(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function stringAt(json: unknown, key: string): string | undefined {
  const v = typeof json === "object" && json !== null ? (json as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" && v !== "" ? v : undefined;
}

function scalarsOf(json: unknown): Record<string, string | number> | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(json)) if (typeof v === "string" || typeof v === "number") out[k] = v;
  return out;
}
