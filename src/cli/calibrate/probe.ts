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

export async function probeProvider(o: ProbeOptions): Promise<ProbeResult> {
  const base = o.url.replace(/\/+$/, "");
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const secrets = [o.apiSecret, o.paymentToken, o.login?.password, o.expiredToken, o.revokedToken].filter((s): s is string => !!s);
  const observed: Observation[] = [];
  const repeats: Observation[] = [];
  const skipped: Skipped[] = [];
  let sentCount = 0;
  const limits = { timeoutMs: o.timeoutMs ?? 15_000, maxBytes: o.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES };

  /** One request, waiting once as a 429's Retry-After asks. */
  const once = async (probe: ProbeName, method: string, path: string, init: { headers?: Record<string, string>; body?: string }) => {
    for (let attempt = 0; ; attempt++) {
      if (sentCount >= MAX_REQUESTS)
        throw new ProviderUnreachable(`calibrate stops after ${MAX_REQUESTS} requests (the provider kept asking it to wait).`);
      sentCount++;
      const answer = await request(base, probe, method, path, init, limits);
      if (answer.status === 429) {
        const wait = retryAfterSeconds(answer.headers["retry-after"]);
        if (attempt === 0 && wait !== undefined && wait <= MAX_RETRY_AFTER_S) {
          await sleep(wait * 1000);
          continue;
        }
        throw new ProviderUnreachable(
          `The provider answered 429 Too Many Requests to ${probe} (${method} ${path})${wait === undefined ? " without a usable Retry-After" : `, asking to wait ${wait} s`}; calibrate stopped. Run it again later.`,
        );
      }
      for (const token of tokensIn(answer.json)) if (!secrets.includes(token)) secrets.push(token);
      return answer;
    }
  };
  type Init = { headers?: Record<string, string>; body?: string };
  /** A probe, and for a repeated one its second request (`again`, or the same once more). */
  const send = async (probe: ProbeName, sent: string, method: string, path: string, init: Init, again: Init = init) => {
    const answer = await once(probe, method, path, init);
    observed.push({ probe, sent, path, answer });
    // What differs between the two answers is a per-request value.
    if (REPEATED_PROBES.includes(probe)) repeats.push({ probe, sent, path, answer: await once(probe, method, path, again) });
    return answer;
  };
  const json = (body: unknown) => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  const TOKEN = "/api/v2/auth/token";
  const INIT = "/api/v2/payment/init";

  const startedAt = Date.now();
  const first = await send(
    "token_body",
    `POST ${TOKEN}, api_key and api_secret in the JSON body`,
    "POST",
    TOKEN,
    json({ api_key: o.apiKey, api_secret: o.apiSecret }),
  );
  await send("token_headers", `POST ${TOKEN}, X-Api-Key and X-Api-Secret headers, no body`, "POST", TOKEN, {
    headers: { "x-api-key": o.apiKey, "x-api-secret": o.apiSecret },
  });
  await send(
    "wrong_secret",
    `POST ${TOKEN}, the api_key with a wrong api_secret`,
    "POST",
    TOKEN,
    json({ api_key: o.apiKey, api_secret: "calibrate-wrong-secret" }),
  );
  await send(
    "unknown_key",
    `POST ${TOKEN}, an api_key no merchant has`,
    "POST",
    TOKEN,
    json({ api_key: "calibrate-unknown-key", api_secret: "calibrate-unknown-secret" }),
  );
  await send("missing_secret", `POST ${TOKEN}, the api_key without api_secret`, "POST", TOKEN, json({ api_key: o.apiKey }));
  await send("missing_key", `POST ${TOKEN}, an api_secret without api_key`, "POST", TOKEN, json({ api_secret: "calibrate-unknown-secret" }));
  await send("malformed_json", `POST ${TOKEN}, a body that is not valid JSON`, "POST", TOKEN, {
    headers: { "content-type": "application/json" },
    body: '{"api_key": ',
  });

  const protectedPath = o.protectedPath;
  const access = await accessTokenOf(first.json, (jwt) => once("protected_fresh", "GET", protectedPath, bearer(jwt)));
  const fresh = access?.jwt;
  if (fresh) await send("protected_fresh", `GET ${protectedPath} with the fresh token`, "GET", protectedPath, bearer(fresh));
  else skipped.push({ probe: "protected_fresh", why: "no token was issued" });
  await send("no_authorization", `GET ${protectedPath} without Authorization`, "GET", protectedPath, {});
  await send("other_scheme", `GET ${protectedPath} with Authorization: Basic`, "GET", protectedPath, {
    headers: { authorization: `Basic ${Buffer.from("calibrate:calibrate").toString("base64")}` },
  });
  await send("empty_bearer", `GET ${protectedPath} with Authorization: Bearer and no token`, "GET", protectedPath, {
    headers: { authorization: "Bearer" },
  });
  if (o.paymentToken)
    await send(
      "payment_token_protected",
      `GET ${protectedPath} with the payment token as its bearer token`,
      "GET",
      protectedPath,
      bearer(o.paymentToken),
    );
  else skipped.push({ probe: "payment_token_protected", why: "no --payment-token: that answer is inferred from the unknown payment token's" });
  await send("malformed_token", `GET ${protectedPath} with a token that is not a JWT`, "GET", protectedPath, bearer("calibrate-not-a-jwt"));
  const foreign = await foreignJwt(fresh);
  await send("foreign_jwt", `GET ${protectedPath} with a JWT signed by a key of calibrate's`, "GET", protectedPath, bearer(foreign));
  if (o.expiredToken) await send("expired_token", `GET ${protectedPath} with --expired-token`, "GET", protectedPath, bearer(o.expiredToken));
  else skipped.push({ probe: "expired_token", why: "no --expired-token: the expired answer is inferred from the foreign-key JWT's" });
  if (o.revokedToken) await send("revoked_token", `GET ${protectedPath} with --revoked-token`, "GET", protectedPath, bearer(o.revokedToken));
  else skipped.push({ probe: "revoked_token", why: "no --revoked-token: the revoked answer is inferred from the foreign-key JWT's" });
  // An empty body: even a provider that took the JWT here could not create a payment from it.
  if (fresh)
    await send("payment_init_jwt", `POST ${INIT} with the JWT (and an empty order)`, "POST", INIT, {
      headers: { ...bearer(fresh).headers, "content-type": "application/json" },
      body: "{}",
    });
  else skipped.push({ probe: "payment_init_jwt", why: "no token was issued" });
  // A payment token no merchant has: nothing can be created with it.
  await send("wrong_payment_token", `POST ${INIT} with a payment token no merchant has (and an empty order)`, "POST", INIT, {
    headers: { ...bearer("calibrate-unknown-payment-token").headers, "content-type": "application/json" },
    body: "{}",
  });
  if (o.login) {
    await send(
      "login",
      "POST /api/login_check with --login",
      "POST",
      "/api/login_check",
      json({ username: o.login.email, password: o.login.password }),
    );
    await send(
      "wrong_password",
      "POST /api/login_check with --login's e-mail and a wrong password",
      "POST",
      "/api/login_check",
      json({ username: o.login.email, password: "calibrate-wrong-password" }),
    );
  } else skipped.push({ probe: "login", why: "no --login: the login's answer is not in the profile" });

  let paymentInitSent: Record<string, string | number> | undefined;
  if (o.allowWrites && o.paymentToken) {
    paymentInitSent = { amount: 100, currency: "EUR", order_id: `calibrate-${startedAt}` };
    const headers = { ...bearer(o.paymentToken).headers, "content-type": "application/json" };
    await send(
      "payment_init",
      `POST ${INIT} with the payment token (creates two test payments)`,
      "POST",
      INIT,
      { headers, body: JSON.stringify(paymentInitSent) },
      { headers, body: JSON.stringify({ ...paymentInitSent, order_id: `calibrate-${startedAt}-2` }) },
    );
  } else {
    skipped.push({
      probe: "payment_init",
      why: o.allowWrites
        ? "no --payment-token: payment/init's success is not in the profile"
        : "a write: sent only with --allow-writes (and --payment-token)",
    });
  }
  return {
    observations: {
      url: base,
      startedAt,
      observed,
      repeats,
      skipped,
      ...(paymentInitSent && { paymentInitSent }),
      ...(o.login && { loginEmail: o.login.email }),
      ...(expOf(o.expiredToken) !== undefined && { expiredTokenExp: expOf(o.expiredToken) }),
      ...(access && { accessTokenPath: access.path }),
    },
    secrets,
    sent: sentCount,
  };
}

async function request(
  base: string,
  probe: ProbeName,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string },
  limits: { timeoutMs: number; maxBytes: number },
): Promise<Answer> {
  let raw: RawAnswer;
  try {
    raw = await readAnswer(base + path, { method, headers: { accept: "application/json", ...init.headers }, body: init.body, ...limits });
  } catch (e) {
    if (e instanceof AnswerTooLarge) throw new ProviderUnreachable(tooLargeMessage(e, probe, method, path, limits.maxBytes));
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
function tooLargeMessage(e: AnswerTooLarge, probe: ProbeName, method: string, path: string, max: number): string {
  const what = e.limit === "received" ? `is over ${max} bytes` : `inflates to over ${max} bytes once its Content-Encoding (${e.encoding}) is undone`;
  return `The provider's answer to ${probe} (${method} ${path}) ${what}, the limit of --max-answer-bytes; calibrate stopped reading it and sent nothing more. Check --url, or raise --max-answer-bytes if its answers really are that large.`;
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
