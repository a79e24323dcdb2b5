import { decodeJwt, decodeProtectedHeader } from "jose";
import { ALGORITHMS } from "../../core/config.js";
import { jwtShape } from "../../core/jwt-runs.js";
import type { RequestIdShape } from "../../profiles/request-id.js";
import { commonHeaders, headerCase, headersObject, headerTemplates } from "./answer-headers.js";
import { isObject, keyOf, leaves, mapLeaves, type Path, pathText } from "./json-paths.js";
import type { Answer, Group, Observation, Observations, ProbeName } from "./observations.js";
import { isEmpty, nowPlaceholder, perRequestPlaceholder, readTime, TIME_TOLERANCE_S, type Varying, varyingBetween } from "./per-request.js";
import { inferRefusals, type RefusalEntry } from "./refusals.js";

/**
 * From what the provider answered to the profile that reproduces it (the format of
 * docs/profiles, written by `calibrate`). Pure: no I/O, no clock but the one in `observations`.
 *
 * - token and login: the JWT-shaped string becomes {{access_token}}; a number within 2 s of the
 *   lifetime {{expires_in}}, in minutes {{expires_in_minutes}}; a timestamp at the JWT's exp
 *   {{expires_at:<its format>}} / {{expires_at_unix}}, at its iat {{issued_at:<format>}}.
 * - every answer: a member or header that differed between two identical probes is a per-request
 *   value ({{request_id}} in the shape seen, {{now:<format>}}); the headers all answers carry alike
 *   are the profile's `headers`, the others stay with their answer; an empty body is `empty: true`.
 * - refusals: refusals.ts; the protected call's 200 as it came, with {{merchant_id}}; the jwt
 *   section from the token's header and claim names.
 */

export interface CalibratedAnswer {
  status: number;
  contentType?: string;
  headers?: Record<string, string>;
  body?: unknown;
  empty?: true;
}

export interface CalibratedProfile {
  name: string;
  description?: string;
  requestId?: RequestIdShape;
  headers?: Record<string, string>;
  token: CalibratedAnswer;
  refusal?: RefusalEntry & { groups?: Partial<Record<Group, RefusalEntry>> };
  codes?: Record<string, RefusalEntry>;
  paymentInit?: CalibratedAnswer;
  login?: CalibratedAnswer;
  protected?: CalibratedAnswer;
  jwt?: {
    alg?: string;
    typ?: string;
    kid?: boolean;
    ttl?: string;
    issuer?: string;
    audience?: string;
    merchantClaim?: string;
    merchantValue?: "merchant_id" | "login";
    claims?: Record<string, unknown>;
  };
}

/** One line of calibrate's table. */
export interface CalibrationLine {
  /** The probe, or what the line is about when no one probe is (`jwt`, `per-request`, `(inferred)`). */
  probe: ProbeName | "jwt" | "per-request" | "(inferred)";
  sent: string;
  cameBack: string;
  profileSays: string;
  /** Set when the profile says something calibrate did not observe: what and why. */
  inferred?: string;
}

export interface Inference {
  profile: CalibratedProfile;
  lines: CalibrationLine[];
}

/** What stands in for a secret-looking constant calibrate will not copy into a profile. */
export const REDACTED = "redacted-by-calibrate";
const SIGNED_ALGS: readonly string[] = ALGORITHMS;

export function inferProfile(obs: Observations, name: string, description?: string): Inference {
  const lines: CalibrationLine[] = [];
  const byProbe = new Map(obs.observed.map((o) => [o.probe, o]));
  const tokenObs = byProbe.get("token_body");
  const jwt = tokenObs ? findJwt(tokenObs.answer.json) : undefined;
  if (!tokenObs || !isSuccess(tokenObs.answer) || !jwt) {
    throw new CannotInfer(
      tokenObs && !isSuccess(tokenObs.answer)
        ? `The token exchange with the given --api-key and --api-secret was refused (HTTP ${tokenObs.answer.status}); check the credentials and --url, then run calibrate again.`
        : "The token exchange's answer holds no JWT (three base64url parts with a JSON header); calibrate learns only providers that issue JWT access tokens.",
    );
  }
  const nowS = obs.startedAt / 1000;
  const repeats = obs.repeats ?? [];
  const varying = varyingBetween(obs.observed, repeats, isJwt);
  // The headers every answer carries alike are the profile's `headers`; the rest stay with their part.
  const headerSets = obs.observed.map((o) => headerTemplates(o.answer, varying, nowS));
  const wide = commonHeaders(headerSets);
  const ctx: Ctx = { varying, nowS, wide, requestIds: new Set() };
  const claims = readClaims(jwt);
  const token = successTemplate(tokenObs.answer.json, jwt, claims, ctx);
  const profile: CalibratedProfile = {
    name,
    ...(description !== undefined && { description }),
    token: answerOf(tokenObs, token.body, ctx),
  };
  lines.push(row(tokenObs, `token: ${summarise(token.body)}`, token.notes.join("; ") || undefined));

  const headersObs = byProbe.get("token_headers");
  if (headersObs) {
    lines.push(
      row(
        headersObs,
        isSuccess(headersObs.answer) ? "nothing new: the sandbox accepts headers too" : "nothing: the sandbox accepts credentials in headers",
        isSuccess(headersObs.answer) ? undefined : "the provider refused credentials in headers; the sandbox does not reproduce that",
      ),
    );
  }

  const refusals = inferRefusals(obs.observed, repeats, { varying, nowS, expiredExp: obs.expiredTokenExp, wide });
  if (refusals.refusal) profile.refusal = refusals.refusal;
  if (Object.keys(refusals.codes).length > 0) profile.codes = refusals.codes;
  for (const line of refusals.lines) {
    const o = line.probe === "(inferred)" ? undefined : byProbe.get(line.probe);
    lines.push(
      o
        ? row(o, line.says, line.note)
        : { probe: "(inferred)", sent: "(not sent)", cameBack: "-", profileSays: line.says, inferred: `${line.code}: ${line.note}` },
    );
  }

  const protectedObs = byProbe.get("protected_fresh");
  if (protectedObs) {
    if (isSuccess(protectedObs.answer)) {
      const body = protectedTemplate(protectedObs, claims, obs.loginEmail, ctx);
      profile.protected = answerOf(protectedObs, body, ctx);
      lines.push(row(protectedObs, `protected: ${isEmpty(protectedObs.answer) ? "no body" : summarise(body)}`));
    } else {
      lines.push(row(protectedObs, "nothing", `the fresh token was refused (HTTP ${protectedObs.answer.status}): is --protected-path right?`));
    }
  }

  const loginObs = byProbe.get("login");
  if (loginObs) {
    const loginJwt = findJwt(loginObs.answer.json);
    if (isSuccess(loginObs.answer) && loginJwt) {
      const login = successTemplate(loginObs.answer.json, loginJwt, readClaims(loginJwt), ctx);
      profile.login = answerOf(loginObs, login.body, ctx);
      lines.push(row(loginObs, `login: ${summarise(login.body)}`, login.notes.join("; ") || undefined));
    } else {
      lines.push(row(loginObs, "nothing: the login did not succeed", "check --login EMAIL:PASSWORD"));
    }
  }

  const paymentObs = byProbe.get("payment_init");
  if (paymentObs) {
    if (isSuccess(paymentObs.answer) && paymentObs.answer.json !== undefined) {
      const body = paymentInitTemplate(paymentObs.answer.json, obs.paymentInitSent ?? {}, ctx);
      profile.paymentInit = answerOf(paymentObs, body, ctx);
      lines.push(row(paymentObs, `paymentInit: ${summarise(body)}`));
    } else {
      lines.push(row(paymentObs, "nothing: payment/init with the payment token did not succeed", "check --payment-token"));
    }
  }

  const again = repeats.find((r) => r.probe === "token_body");
  const againJwt = again && findJwt(again.answer.json);
  const jwtSection = jwtOf(claims, againJwt ? readClaims(againJwt) : undefined, obs.loginEmail);
  profile.jwt = jwtSection.jwt;
  lines.push({
    probe: "jwt",
    sent: "decoded the issued JWT (no verification)",
    cameBack: `alg ${claims.header.alg ?? "?"}, typ ${claims.header.typ ?? "-"}, kid ${claims.header.kid === undefined ? "absent" : "present"}, claims ${Object.keys(claims.payload).join(", ")}`,
    profileSays: `jwt: ${Object.entries(jwtSection.jwt)
      .map(([k, v]) => `${k} ${typeof v === "object" ? Object.keys(v).join("+") : v}`)
      .join(", ")}`,
    ...(jwtSection.notes.length > 0 && { inferred: jwtSection.notes.join("; ") }),
  });
  if (wide.size > 0) profile.headers = headersObject(wide);
  const shapes = [...ctx.requestIds];
  if (shapes.length > 0) profile.requestId = shapes[0];
  if (varying.headers.size + varying.keys.size > 0)
    lines.push({
      probe: "per-request",
      sent: `sent ${repeats.map((r) => r.probe).join(", ")} twice`,
      cameBack: `differed: ${[...[...varying.headers].map(headerCase), ...varying.keys].join(", ")}`,
      profileSays: `per-request placeholders${shapes.length > 0 ? `, requestId ${shapes.join("/")}` : ""}`,
    });
  for (const s of obs.skipped) lines.push({ probe: s.probe, sent: "not sent", cameBack: "-", profileSays: "-", inferred: s.why });
  return { profile, lines };
}

interface Ctx {
  varying: Varying;
  nowS: number;
  wide: Map<string, string>;
  /** The request-id shapes met, the first is the profile's `requestId`. */
  requestIds: Set<RequestIdShape>;
}

/** A success answer as a profile writes it: status, content type, its own headers, body or no body. */
function answerOf(o: Observation, body: unknown, ctx: Ctx): CalibratedAnswer {
  const own = headerTemplates(o.answer, ctx.varying, ctx.nowS);
  // A header repeating a body value that became a placeholder (Location: /payments/<payment_id>) repeats the placeholder.
  const placed = new Map<string, string>();
  const template = new Map(leaves(body).map((l) => [pathText(l.path), l.value]));
  for (const l of leaves(o.answer.json)) {
    const t = template.get(pathText(l.path));
    if (typeof l.value === "string" && l.value.length >= 8 && typeof t === "string" && /^\{\{[a-z_]+\}\}$/.test(t)) placed.set(l.value, t);
  }
  for (const [name, value] of own) {
    let v = value;
    for (const [raw, t] of placed) v = v.split(raw).join(t);
    own.set(name, v);
  }
  const headers = headersObject(own, ctx.wide);
  const empty = isEmpty(o.answer);
  return {
    status: o.answer.status,
    ...(!empty && { contentType: o.answer.contentType ?? "application/json" }),
    ...(headers && { headers }),
    ...(empty ? { empty: true as const } : { body }),
  };
}

/** A leaf that varied between identical probes, or a time near now: its per-request placeholder. */
function perRequestLeaf(path: Path, v: unknown, ctx: Ctx): string | undefined {
  if (ctx.varying.keys.has(keyOf(path))) {
    const per = perRequestPlaceholder(v, ctx.nowS);
    if (per?.requestId) ctx.requestIds.add(per.requestId);
    if (per) return per.placeholder;
  }
  return nowPlaceholder(v, ctx.nowS);
}

/**
 * The protected call's 200: the merchant's id {{merchant_id}}, the sandbox's own placeholder answer
 * (when the provider is a sandbox) {{sandbox}}, per-request values; the rest as it came.
 */
function protectedTemplate(o: Observation, claims: Claims, loginEmail: string | undefined, ctx: Ctx): unknown {
  const merchant = [
    claims.payload.sub,
    ...Object.entries(claims.payload)
      .filter(([k]) => /merchant/i.test(k))
      .map(([, v]) => v),
  ].filter((v) => typeof v === "string" && v !== loginEmail);
  const operation = o.path === undefined ? undefined : `GET ${o.path}`;
  const sandboxOwn = (v: unknown) => isObject(v) && v.sandbox === true && v.operation === operation && "token_id" in v;
  const walk = (v: unknown, path: Path): unknown => {
    if (sandboxOwn(v)) return "{{sandbox}}";
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...path, k])]));
    const per = perRequestLeaf(path, v, ctx);
    if (per) return per;
    if (typeof v === "string" && merchant.includes(v)) return "{{merchant_id}}";
    if (v === operation) return "{{operation}}";
    return v;
  };
  return walk(o.answer.json, []);
}

export class CannotInfer extends Error {}

// ---- token and login ----------------------------------------------------------------------------

interface Claims {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  iat: number | undefined;
  exp: number | undefined;
}

function readClaims(jwt: string): Claims {
  const header = decodeProtectedHeader(jwt) as Record<string, unknown>;
  const payload = decodeJwt(jwt) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  return { header, payload, iat: num(payload.iat), exp: num(payload.exp) };
}

/** A signed JWT (core's one shape test) whose header names its algorithm: what calibrate can read claims from. */
export function isJwt(value: unknown): boolean {
  if (typeof value !== "string" || jwtShape(value) !== "jws") return false;
  try {
    return typeof decodeProtectedHeader(value).alg === "string";
  } catch {
    return false;
  }
}

/** The first JWT in a JSON body (the bare body, when the answer is the token itself). */
export function findJwt(json: unknown): string | undefined {
  return leaves(json)
    .map((l) => l.value)
    .find(isJwt) as string | undefined;
}

function successTemplate(json: unknown, jwt: string, claims: Claims, ctx: Ctx): { body: unknown; notes: string[] } {
  const notes: string[] = [];
  const ttl = claims.exp !== undefined && claims.iat !== undefined ? claims.exp - claims.iat : undefined;
  const body = mapLeaves(json, (path, v) => {
    if (typeof v === "string") {
      if (v === jwt) return "{{access_token}}";
      const at = readTime(v);
      // The token's own times first: its iat is also "now".
      if (at !== undefined && near(at.seconds, claims.exp)) return `{{expires_at:${at.format}}}`;
      if (at !== undefined && near(at.seconds, claims.iat)) return `{{issued_at:${at.format}}}`;
      const per = perRequestLeaf(path, v, ctx);
      if (per) return per;
      if (isJwt(v) || looksSecret(path, v)) {
        notes.push(`${pathText(path)}: a token-like value, written as "${REDACTED}"`);
        return REDACTED;
      }
      return v;
    }
    if (typeof v === "number" && ttl !== undefined) {
      // A lifetime counted a second or two after the token was made is still the lifetime.
      if (Math.abs(v - ttl) <= LIFETIME_TOLERANCE_S) return "{{expires_in}}";
      if (ttl % 60 === 0 && v === ttl / 60) return "{{expires_in_minutes}}";
      if (near(v, claims.exp)) return "{{expires_at_unix}}";
    }
    return perRequestLeaf(path, v, ctx) ?? v;
  });
  return { body, notes };
}

/** How far a lifetime in an answer may be from the JWT's exp - iat and still be it. */
const LIFETIME_TOLERANCE_S = 2;

function near(seconds: number, target: number | undefined): boolean {
  return target !== undefined && Math.abs(seconds - target) <= TIME_TOLERANCE_S;
}

/** A long opaque string under a token-ish name, or one that only a machine would write: not copied. */
function looksSecret(path: Path, value: string): boolean {
  if (/\s/.test(value) || /^https?:\/\//.test(value)) return false;
  if (/token|secret|password|refresh|key|signature/i.test(keyOf(path)) && value.length >= 16) return true;
  return value.length >= 32 && /^[A-Za-z0-9+/=_.~-]+$/.test(value);
}

// ---- payment/init -------------------------------------------------------------------------------

function paymentInitTemplate(json: unknown, sent: Record<string, string | number>, ctx: Ctx): unknown {
  let createdSeen = false;
  return mapLeaves(json, (path, v) => {
    for (const [field, value] of Object.entries(sent)) if (v === value) return `{{${field}}}`;
    if (typeof v !== "string") return perRequestLeaf(path, v, ctx) ?? v;
    const key = keyOf(path);
    if (/^https?:\/\//.test(v)) return "{{checkout_url}}";
    const at = readTime(v);
    if (at !== undefined) {
      if (!createdSeen && Math.abs(at.seconds - ctx.nowS) <= TIME_TOLERANCE_S) {
        createdSeen = true;
        return "{{created_at}}";
      }
      return "{{expires_at}}";
    }
    // A request id varies too, but per request, not per payment.
    const per = perRequestLeaf(path, v, ctx);
    if (per) return per;
    if (/merchant/i.test(key)) return "{{merchant_id}}";
    if (/(^|_|[a-z])(id|Id|ID)$/.test(key)) return "{{payment_id}}";
    return v;
  });
}

// ---- jwt ----------------------------------------------------------------------------------------

/** Registered claims the sandbox sets itself (RFC 7519 §4.1), and the scope it derives from the merchant. */
const OWN_CLAIMS = new Set(["iss", "sub", "aud", "exp", "nbf", "iat", "jti", "scope", "scp", "typ", "client_id", "azp"]);

/**
 * The jwt section from the issued token's header and claim names (decoded, never verified): alg,
 * typ (or none), kid (or not), iss and aud (or none), the merchant claim and what it holds, and
 * the other claims that had the same value in both tokens (constants such as roles). No value of
 * the token itself is written, only those constants.
 */
function jwtOf(
  claims: Claims,
  again: Claims | undefined,
  loginEmail: string | undefined,
): { jwt: NonNullable<CalibratedProfile["jwt"]>; notes: string[] } {
  const notes: string[] = [];
  const jwt: NonNullable<CalibratedProfile["jwt"]> = {};
  const alg = String(claims.header.alg);
  if (SIGNED_ALGS.includes(alg)) jwt.alg = alg;
  else notes.push(`alg ${alg} is not one the sandbox signs with (${SIGNED_ALGS.join(", ")}); the sandbox's default is kept`);
  jwt.typ = typeof claims.header.typ === "string" ? claims.header.typ : "none";
  jwt.kid = claims.header.kid !== undefined;
  if (claims.exp !== undefined && claims.iat !== undefined) jwt.ttl = durationText(claims.exp - claims.iat);
  else notes.push("the JWT has no exp or iat, so its lifetime is unknown; the sandbox's default ttl is kept");
  jwt.issuer = typeof claims.payload.iss === "string" ? claims.payload.iss : "none";
  const aud = Array.isArray(claims.payload.aud) ? claims.payload.aud[0] : claims.payload.aud;
  jwt.audience = typeof aud === "string" ? aud : "none";
  const holdsLogin = Object.entries(claims.payload).find(
    ([k, v]) =>
      !OWN_CLAIMS.has(k) && typeof v === "string" && (v === loginEmail || (loginEmail === undefined && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v))),
  );
  // A claim of its own holding what sub holds names the merchant too (the sandbox under `merchantClaim`).
  const likeSub = Object.entries(claims.payload).find(([k, v]) => !OWN_CLAIMS.has(k) && claims.payload.sub !== undefined && v === claims.payload.sub);
  const merchantClaim = Object.keys(claims.payload).find((k) => /merchant/i.test(k)) ?? holdsLogin?.[0] ?? likeSub?.[0];
  jwt.merchantClaim = merchantClaim ?? "sub";
  if (holdsLogin && merchantClaim === holdsLogin[0]) jwt.merchantValue = "login";
  notes.push(
    merchantClaim === undefined
      ? "merchantClaim sub: no claim's name says merchant, so the subject"
      : holdsLogin && merchantClaim === holdsLogin[0]
        ? `merchantClaim ${merchantClaim}: it holds the login e-mail (merchantValue login)`
        : merchantClaim === likeSub?.[0]
          ? `merchantClaim ${merchantClaim}: it holds what sub holds`
          : `merchantClaim ${merchantClaim}: the claim whose name says merchant`,
  );
  const statics: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(claims.payload)) {
    if (OWN_CLAIMS.has(k) || k === jwt.merchantClaim || /secret|password|token|key/i.test(k)) continue;
    if (again === undefined || JSON.stringify(again.payload[k]) !== JSON.stringify(v)) continue;
    statics[k] = v;
  }
  if (Object.keys(statics).length > 0) jwt.claims = statics;
  if (again === undefined) notes.push("one token only: no extra claim is known to be constant");
  return { jwt, notes };
}

/** Seconds as --token-ttl writes them: 1h, 15m, 90s. */
export function durationText(seconds: number): string {
  if (seconds > 0 && seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds > 0 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

// ---- shared -------------------------------------------------------------------------------------

export function isSuccess(answer: Answer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** A body in one line for the table: leaves with short values, long strings as their length. */
export function summarise(json: unknown): string {
  if (json === undefined) return "(no JSON body)";
  const parts = leaves(json).map(({ path, value }) => `${pathText(path)}: ${shortValue(value)}`);
  const text = `{${parts.join(", ")}}`;
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function shortValue(value: unknown): string {
  if (typeof value !== "string") return JSON.stringify(value) ?? String(value);
  if (/^\{\{[a-z_]+\}\}$/.test(value)) return value;
  if (isJwt(value)) return "<a JWT>";
  // An opaque string may be a token or a key: only its length is shown.
  if (!/\s/.test(value) && value.length > 24) return `<opaque, ${value.length} chars>`;
  if (value.length > 40) return `"${value.slice(0, 30)}..." (${value.length} chars)`;
  return JSON.stringify(value);
}

function row(o: Observation, profileSays: string, inferred?: string): CalibrationLine {
  const a = o.answer;
  return {
    probe: o.probe,
    sent: o.sent,
    cameBack: `${a.status} ${a.contentType ?? "-"} ${a.notJson ? "(not JSON)" : summarise(a.json)}`,
    profileSays,
    ...(inferred !== undefined && { inferred }),
  };
}
