import { decodeJwt, decodeProtectedHeader } from "jose";
import { ALGORITHMS } from "../../core/config.js";
import { type CatalogueCode, ERROR_CATALOGUE } from "../../core/error-catalogue.js";
import { isObject, keyOf, leaves, mapLeaves, type Path, pathText } from "./json-paths.js";
import { type Answer, INFERRED_CODES, type Observation, type Observations, PROBE_CODES, type ProbeName } from "./observations.js";

/**
 * From what the provider answered to the profile that reproduces it (the format of
 * docs/profiles, written by `calibrate`). Pure: no I/O, no clock but the one in `observations`.
 *
 * - token and login: the JWT-shaped string becomes {{access_token}}; a number equal to the lifetime
 *   in seconds {{expires_in}}, in minutes {{expires_in_minutes}}; a timestamp at the JWT's exp
 *   {{expires_at}} / {{expires_at_unix}}, at its iat {{issued_at}}; anything else stays a constant.
 * - refusals: the most common shape is the template; in it the longest human sentence is {{message}},
 *   a number equal to the status {{status}}, the code (a code-like string or an integer) that differs between refusals
 *   {{code}}; each probe's code and (when it differs from the sandbox's) status go to `codes`, and
 *   a refusal the template does not reproduce gets a body of its own.
 */

export interface CalibratedProfile {
  name: string;
  description?: string;
  token: { status: number; contentType: string; headers?: Record<string, string>; body: unknown };
  refusal?: { contentType: string; body: unknown; wwwAuthenticate: "keep" | "omit" };
  codes?: Record<string, { code?: string | number; status?: number; body?: unknown }>;
  paymentInit?: { status: number; body: unknown };
  login?: { status: number; body: unknown };
  jwt?: { alg?: string; typ?: string; ttl?: string; issuer?: string; audience?: string; merchantClaim?: string };
}

/** One line of calibrate's table. */
export interface Finding {
  /** The probe, or what the line is about when no one probe is (`jwt`, `refusals`, `(inferred)`). */
  probe: ProbeName | "jwt" | "refusals" | "(inferred)";
  sent: string;
  cameBack: string;
  profileSays: string;
  /** Set when the profile says something calibrate did not observe: what and why. */
  inferred?: string;
}

export interface Inference {
  profile: CalibratedProfile;
  findings: Finding[];
}

/** What stands in for a secret-looking constant calibrate will not copy into a profile. */
export const REDACTED = "redacted-by-calibrate";
const SIGNED_ALGS: readonly string[] = ALGORITHMS;
/** How far a timestamp may be from the JWT's exp or iat and still be read as it (clock skew, rounding). */
const TIME_TOLERANCE_S = 120;

export function inferProfile(obs: Observations, name: string, description?: string): Inference {
  const findings: Finding[] = [];
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
  const claims = readClaims(jwt);
  const token = successTemplate(tokenObs.answer.json, jwt, claims);
  const profile: CalibratedProfile = {
    name,
    ...(description !== undefined && { description }),
    token: {
      status: tokenObs.answer.status,
      contentType: tokenObs.answer.contentType ?? "application/json",
      ...cacheHeaders(tokenObs.answer),
      body: token.body,
    },
  };
  findings.push(row(tokenObs, `token: ${summarise(token.body)}`, token.notes.join("; ") || undefined));

  const headersObs = byProbe.get("token_headers");
  if (headersObs) {
    findings.push(
      row(
        headersObs,
        isSuccess(headersObs.answer) ? "nothing new: the sandbox accepts headers too" : "nothing: the sandbox accepts credentials in headers",
        isSuccess(headersObs.answer) ? undefined : "the provider refused credentials in headers; the sandbox does not reproduce that",
      ),
    );
  }

  const refusals = inferRefusals(obs.observed);
  if (refusals.template) profile.refusal = refusals.template;
  if (Object.keys(refusals.codes).length > 0) profile.codes = refusals.codes;
  findings.push(...refusals.findings);

  const protectedObs = byProbe.get("protected_fresh");
  if (protectedObs) {
    findings.push(
      row(
        protectedObs,
        "nothing (the business body is not reproduced)",
        isSuccess(protectedObs.answer) ? undefined : `the fresh token was refused (HTTP ${protectedObs.answer.status}): is --protected-path right?`,
      ),
    );
  }

  const loginObs = byProbe.get("login");
  if (loginObs) {
    const loginJwt = findJwt(loginObs.answer.json);
    if (isSuccess(loginObs.answer) && loginJwt) {
      const login = successTemplate(loginObs.answer.json, loginJwt, readClaims(loginJwt));
      profile.login = { status: loginObs.answer.status, body: login.body };
      findings.push(row(loginObs, `login: ${summarise(login.body)}`, login.notes.join("; ") || undefined));
    } else {
      findings.push(row(loginObs, "nothing: the login did not succeed", "check --login EMAIL:PASSWORD"));
    }
  }

  const paymentObs = byProbe.get("payment_init");
  if (paymentObs) {
    if (isSuccess(paymentObs.answer) && paymentObs.answer.json !== undefined) {
      const body = paymentInitTemplate(paymentObs.answer.json, obs.paymentInitSent ?? {}, obs.startedAt);
      profile.paymentInit = { status: paymentObs.answer.status, body };
      findings.push(row(paymentObs, `paymentInit: ${summarise(body)}`));
    } else {
      findings.push(row(paymentObs, "nothing: payment/init with the payment token did not succeed", "check --payment-token"));
    }
  }

  const jwtSection = jwtOf(claims);
  profile.jwt = jwtSection.jwt;
  findings.push({
    probe: "jwt",
    sent: "decoded the issued JWT (no verification)",
    cameBack: `alg ${claims.header.alg ?? "?"}, typ ${claims.header.typ ?? "-"}, claims ${Object.keys(claims.payload).join(", ")}`,
    profileSays: `jwt: ${Object.entries(jwtSection.jwt)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
    ...(jwtSection.notes.length > 0 && { inferred: jwtSection.notes.join("; ") }),
  });
  for (const s of obs.skipped) findings.push({ probe: s.probe, sent: "not sent", cameBack: "-", profileSays: "-", inferred: s.why });
  return { profile, findings };
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

const JWT_SHAPE = /^[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*$/;

export function isJwt(value: unknown): boolean {
  if (typeof value !== "string" || !JWT_SHAPE.test(value)) return false;
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

function successTemplate(json: unknown, jwt: string, claims: Claims): { body: unknown; notes: string[] } {
  const notes: string[] = [];
  const ttl = claims.exp !== undefined && claims.iat !== undefined ? claims.exp - claims.iat : undefined;
  const body = mapLeaves(json, (path, v) => {
    if (typeof v === "string") {
      if (v === jwt) return "{{access_token}}";
      const at = isoSeconds(v);
      if (at !== undefined && near(at, claims.exp)) return "{{expires_at}}";
      if (at !== undefined && near(at, claims.iat)) return "{{issued_at}}";
      if (isJwt(v) || looksSecret(path, v)) {
        notes.push(`${pathText(path)}: a token-like value, written as "${REDACTED}"`);
        return REDACTED;
      }
      return v;
    }
    if (typeof v === "number" && ttl !== undefined) {
      if (v === ttl) return "{{expires_in}}";
      if (ttl % 60 === 0 && v === ttl / 60) return "{{expires_in_minutes}}";
      if (near(v, claims.exp)) return "{{expires_at_unix}}";
    }
    return v;
  });
  return { body, notes };
}

function near(seconds: number, target: number | undefined): boolean {
  return target !== undefined && Math.abs(seconds - target) <= TIME_TOLERANCE_S;
}

/** Seconds since 1970 of an ISO 8601 date-time string; undefined for anything else. */
function isoSeconds(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/** A long opaque string under a token-ish name, or one that only a machine would write: not copied. */
function looksSecret(path: Path, value: string): boolean {
  if (/\s/.test(value) || /^https?:\/\//.test(value)) return false;
  if (/token|secret|password|refresh|key|signature/i.test(keyOf(path)) && value.length >= 16) return true;
  return value.length >= 32 && /^[A-Za-z0-9+/=_.~-]+$/.test(value);
}

function cacheHeaders(answer: Answer): { headers?: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (answer.headers["cache-control"]) headers["Cache-Control"] = answer.headers["cache-control"];
  if (answer.headers.pragma) headers.Pragma = answer.headers.pragma;
  return Object.keys(headers).length > 0 ? { headers } : {};
}

// ---- refusals -----------------------------------------------------------------------------------

interface Refusal {
  obs: Observation;
  code: CatalogueCode;
  json: unknown;
}

interface RefusalInference {
  template?: NonNullable<CalibratedProfile["refusal"]>;
  codes: NonNullable<CalibratedProfile["codes"]>;
  findings: Finding[];
}

type Role = "status" | "message" | "code";

function inferRefusals(observed: Observation[]): RefusalInference {
  const findings: Finding[] = [];
  const codes: RefusalInference["codes"] = {};
  const refusals: Refusal[] = [];
  for (const o of observed) {
    const code = PROBE_CODES[o.probe];
    if (!code) continue;
    if (isSuccess(o.answer)) {
      findings.push(row(o, "nothing: the provider did not refuse it", "the sandbox refuses it anyway (its semantics do not change)"));
    } else if (o.answer.json === undefined || o.answer.json === null || typeof o.answer.json !== "object") {
      findings.push(
        row(o, codeEntryText(code, statusEntry(code, o.answer.status)), "the body is not a JSON object, so only the status is reproduced"),
      );
      const status = statusEntry(code, o.answer.status);
      if (status) codes[code] = status;
    } else {
      refusals.push({ obs: o, code, json: o.answer.json });
    }
  }
  if (refusals.length === 0) return { codes, findings };

  // The most common shape is the template; ties go to the first seen.
  const groups = new Map<string, Refusal[]>();
  for (const r of refusals) {
    const key = shapeOf(r.json);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const main = [...groups.values()].reduce((a, b) => (b.length > a.length ? b : a));
  const roles = rolesOf(main);
  const template = mapLeaves(main[0]!.json, (path, v) => placeholderFor(roles, path) ?? v);
  const contentTypes = main.map((r) => r.obs.answer.contentType ?? "application/json");
  const challenge = refusals.some((r) => r.obs.answer.status === 401 && r.obs.answer.headers["www-authenticate"] !== undefined);

  for (const r of refusals) {
    const ownRoles = reproduces(template, roles, r) ? roles : rolesOf([r]);
    const ownBody = ownRoles === roles ? undefined : mapLeaves(r.json, (path, v) => placeholderFor(ownRoles, path) ?? v);
    const providerCode = ownRoles.code ? valueAt(r.json, ownRoles.code.path) : undefined;
    const entry = {
      ...((typeof providerCode === "string" || typeof providerCode === "number") && { code: providerCode }),
      ...statusEntry(r.code, r.obs.answer.status),
      ...(ownBody !== undefined && { body: ownBody }),
    };
    if (Object.keys(entry).length > 0) codes[r.code] = entry;
    findings.push(row(r.obs, codeEntryText(r.code, entry)));
  }
  for (const i of INFERRED_CODES) {
    if (codes[i.code] || refusals.some((r) => r.code === i.code)) continue;
    const from = refusals.find((r) => r.obs.probe === i.from);
    if (!from) continue;
    // The probe's code and body; the status only where it differs from this code's own.
    const { status: _, ...source } = codes[from.code] ?? {};
    const entry = { ...source, ...statusEntry(i.code, from.obs.answer.status) };
    if (Object.keys(entry).length > 0) codes[i.code] = entry;
    findings.push({
      probe: "(inferred)",
      sent: "(not sent)",
      cameBack: "-",
      profileSays: codeEntryText(i.code, entry),
      inferred: `${i.code}: ${i.why}`,
    });
  }
  return {
    template: {
      contentType: mostCommon(contentTypes),
      body: template,
      wwwAuthenticate: challenge ? "keep" : "omit",
    },
    codes,
    findings: [
      ...findings,
      {
        probe: "refusals",
        sent: `(${main.length} of ${refusals.length} refusals share one shape)`,
        cameBack: summarise(main[0]!.json),
        profileSays: `refusal: ${summarise(template)}`,
        ...(roles.message && { inferred: "{{message}} is the sandbox's explanation, not the provider's text" }),
      },
    ],
  };
}

interface Roles {
  status: Path[];
  message?: { path: Path };
  code?: { path: Path };
}

/** Which leaves of refusals that share one shape are the status, the message and the code. */
function rolesOf(group: Refusal[]): Roles {
  const paths = leaves(group[0]!.json).map((l) => l.path);
  const at = (path: Path) => group.map((r) => valueAt(r.json, path));
  const status = paths.filter((p) => group.every((r) => valueAt(r.json, p) === r.obs.answer.status));
  const sentences = paths
    .filter((p) => at(p).every((v) => typeof v === "string" && /[A-Za-z]/.test(v) && /\s/.test(v.trim())))
    .map((p) => ({ path: p, length: at(p).reduce<number>((n, v) => n + String(v).length, 0) }))
    .sort((a, b) => b.length - a.length);
  const isStatus = (p: Path) => status.some((s) => pathText(s) === pathText(p));
  const codeLike = paths
    .filter((p) => !isStatus(p) && at(p).every((v) => (typeof v === "string" && CODE_LIKE.test(v)) || Number.isInteger(v)))
    .map((p) => ({ path: p, distinct: new Set(at(p)).size, named: /code|error/i.test(keyOf(p)) }))
    // One refusal cannot show which string varies: then the one under a code-ish name.
    .filter((c) => (group.length > 1 ? c.distinct > 1 : c.named))
    .sort((a, b) => b.distinct - a.distinct || Number(b.named) - Number(a.named));
  return {
    status,
    ...(sentences[0] && { message: { path: sentences[0].path } }),
    ...(codeLike[0] && { code: { path: codeLike[0].path } }),
  };
}

const CODE_LIKE = /^[A-Za-z][A-Za-z0-9]*(?:[_.:-][A-Za-z0-9]+)*$/;

function placeholderFor(roles: Roles, path: Path): string | undefined {
  const same = (p: Path | undefined) => p !== undefined && pathText(p) === pathText(path);
  const role: Role | undefined = roles.status.some(same)
    ? "status"
    : same(roles.message?.path)
      ? "message"
      : same(roles.code?.path)
        ? "code"
        : undefined;
  return role && `{{${role}}}`;
}

/** Whether the template, filled with this refusal's status, message and code, gives back its body. */
function reproduces(template: unknown, roles: Roles, r: Refusal): boolean {
  if (shapeOf(template) !== shapeOf(r.json)) return false;
  return leaves(template).every(({ path, value }) => {
    if (placeholderFor(roles, path) === undefined) return JSON.stringify(value) === JSON.stringify(valueAt(r.json, path));
    const placeholder = placeholderFor(roles, path);
    if (placeholder === "{{status}}") return valueAt(r.json, path) === r.obs.answer.status;
    const v = valueAt(r.json, path);
    return typeof v === "string" || (placeholder === "{{code}}" && Number.isInteger(v));
  });
}

function statusEntry(code: CatalogueCode, status: number): { status?: number } {
  return ERROR_CATALOGUE[code].status[0] === status ? {} : { status };
}

function codeEntryText(code: string, entry: { code?: string | number; status?: number; body?: unknown }): string {
  const parts = [
    entry.code !== undefined && `code ${entry.code}`,
    entry.status !== undefined && `status ${entry.status}`,
    entry.body !== undefined && `own body ${summarise(entry.body)}`,
  ].filter(Boolean);
  return `codes.${code}: ${parts.join(", ") || "as the sandbox (refusal template)"}`;
}

// ---- payment/init -------------------------------------------------------------------------------

function paymentInitTemplate(json: unknown, sent: Record<string, string | number>, startedAt: number): unknown {
  let createdSeen = false;
  return mapLeaves(json, (path, v) => {
    for (const [field, value] of Object.entries(sent)) if (v === value) return `{{${field}}}`;
    if (typeof v !== "string") return v;
    const key = keyOf(path);
    if (/^https?:\/\//.test(v)) return "{{checkout_url}}";
    const at = isoSeconds(v);
    if (at !== undefined) {
      if (!createdSeen && Math.abs(at - startedAt / 1000) <= TIME_TOLERANCE_S) {
        createdSeen = true;
        return "{{created_at}}";
      }
      return "{{expires_at}}";
    }
    if (/merchant/i.test(key)) return "{{merchant_id}}";
    if (/(^|_|[a-z])(id|Id|ID)$/.test(key)) return "{{payment_id}}";
    return v;
  });
}

// ---- jwt ----------------------------------------------------------------------------------------

function jwtOf(claims: Claims): { jwt: NonNullable<CalibratedProfile["jwt"]>; notes: string[] } {
  const notes: string[] = [];
  const jwt: NonNullable<CalibratedProfile["jwt"]> = {};
  const alg = String(claims.header.alg);
  if (SIGNED_ALGS.includes(alg)) jwt.alg = alg;
  else notes.push(`alg ${alg} is not one the sandbox signs with (${SIGNED_ALGS.join(", ")}); the sandbox's default is kept`);
  if (typeof claims.header.typ === "string") jwt.typ = claims.header.typ;
  if (claims.exp !== undefined && claims.iat !== undefined) jwt.ttl = durationText(claims.exp - claims.iat);
  else notes.push("the JWT has no exp or iat, so its lifetime is unknown; the sandbox's default ttl is kept");
  if (typeof claims.payload.iss === "string") jwt.issuer = claims.payload.iss;
  const aud = Array.isArray(claims.payload.aud) ? claims.payload.aud[0] : claims.payload.aud;
  if (typeof aud === "string") jwt.audience = aud;
  const merchantClaim = Object.keys(claims.payload).find((k) => /merchant/i.test(k));
  jwt.merchantClaim = merchantClaim ?? "sub";
  notes.push(
    merchantClaim
      ? `merchantClaim ${merchantClaim}: the claim whose name says merchant`
      : "merchantClaim sub: no claim's name says merchant, so the subject",
  );
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

function shapeOf(json: unknown): string {
  return leaves(json)
    .map((l) => pathText(l.path))
    .sort()
    .join(" ");
}

function valueAt(json: unknown, path: Path): unknown {
  let v: unknown = json;
  for (const p of path) v = isObject(v) || Array.isArray(v) ? (v as Record<string | number, unknown>)[p] : undefined;
  return v;
}

function mostCommon(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
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

function row(o: Observation, profileSays: string, inferred?: string): Finding {
  const a = o.answer;
  return {
    probe: o.probe,
    sent: o.sent,
    cameBack: `${a.status} ${a.contentType ?? "-"} ${a.notJson ? "(not JSON)" : summarise(a.json)}`,
    profileSays,
    ...(inferred !== undefined && { inferred }),
  };
}
