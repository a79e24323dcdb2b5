import { jwtShape } from "../../core/jwt-runs.js";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { ALGORITHMS } from "../../core/config.js";
import { HEADER_MEMBERS, type HeaderMember, RESERVED_CLAIMS } from "../../core/token-format.js";
import { keyOf, leaves, pathText } from "./json-paths.js";

/**
 * The provider's JWT as calibrate reads it (decoded, never verified): finding it in an answer, its
 * header and claims, and the profile's jwt section they give.
 */

/** The jwt section of a calibrated profile. */
export interface CalibratedJwt {
  alg?: string;
  typ?: string;
  kid?: boolean;
  ttl?: string;
  issuer?: string;
  audience?: string;
  merchantClaim?: string;
  merchantValue?: "merchant_id" | "login";
  claims?: Record<string, unknown>;
  /** The header's member order, when it is not the one the sandbox writes for that header. */
  headerOrder?: HeaderMember[];
  /** Where the sandbox's client and scope bookkeeping goes, when not client_id and scope (or none). */
  clientClaim?: string;
  scopeClaim?: string;
  /** From the expired token's answer (leeway.ts), not from the token. */
  leeway?: string;
}

const SIGNED_ALGS: readonly string[] = ALGORITHMS;

export interface Claims {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  iat: number | undefined;
  exp: number | undefined;
}

export function readClaims(jwt: string): Claims {
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

/** A member that names the token a client sends on (OAuth's access_token, Lexik's token, `access`, `jwt`). */
const ACCESS_NAME = /access|^(token|jwt|bearer)$|^(jwt|bearer|auth)_?token$/i;
/** A member that names another token: a refresh token, an OpenID Connect id_token. */
const OTHER_NAME = /refresh|^id_?token$/i;

/**
 * The JWTs of a JSON body (the bare body, when the answer is the token itself), the likeliest
 * access token first: one at `preferred` (the one the provider was seen to accept), then those
 * named as an access token, then the unnamed, then those named as another token.
 */
export function jwtCandidates(json: unknown, preferred?: string): Array<{ path: string; jwt: string }> {
  const rank = (path: string, key: string) => (path === preferred ? 0 : ACCESS_NAME.test(key) ? 1 : OTHER_NAME.test(key) ? 3 : 2);
  return leaves(json)
    .filter((l) => isJwt(l.value))
    .map((l, order) => ({ path: pathText(l.path), jwt: l.value as string, rank: rank(pathText(l.path), keyOf(l.path)), order }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order)
    .map(({ path, jwt }) => ({ path, jwt }));
}

/** The likeliest access token of a JSON body (jwtCandidates). */
export function findJwt(json: unknown, preferred?: string): string | undefined {
  return jwtCandidates(json, preferred)[0]?.jwt;
}

/** Whether the names alone tell the access token apart: one candidate, or exactly one named as such. */
export function accessTokenNamed(json: unknown): boolean {
  const found = leaves(json).filter((l) => isJwt(l.value));
  return found.length <= 1 || found.filter((l) => ACCESS_NAME.test(keyOf(l.path)) && !OTHER_NAME.test(keyOf(l.path))).length === 1;
}

/** The providers' names for the client and scope claims the sandbox writes as client_id and scope (bookkeepingClaims). */
const CLIENT_CLAIM_NAMES = ["azp", "cid"] as const;
const SCOPE_CLAIM_NAMES = ["scp"] as const;

/**
 * Claims the sandbox writes itself, under any of their names: a profile's `claims` may not set
 * them (core's RESERVED_CLAIMS), nor the client and scope claims a profile renames.
 */
const OWN_CLAIMS = new Set<string>([...RESERVED_CLAIMS, "typ", ...CLIENT_CLAIM_NAMES, ...SCOPE_CLAIM_NAMES]);

/**
 * The jwt section from the issued token's header and claim names (decoded, never verified): alg,
 * typ (or none), kid (or not), iss and aud (or none), the merchant claim and what it holds, and
 * the other claims that had the same value in both tokens (constants such as roles). No value of
 * the token itself is written, only those constants.
 */
/** How far a lifetime read from exp and the time its answer came may be from a whole minute and still be read as it. */
const WHOLE_MINUTE_TOLERANCE_S = 2;

/**
 * The token's lifetime: exp - iat; with no iat, exp less the time its answer came (`receivedAtS`),
 * read as a whole minute when within WHOLE_MINUTE_TOLERANCE_S of one (the provider made it a moment
 * before it answered). Undefined without exp, or when exp was already past.
 */
export function lifetimeOf(claims: Claims, receivedAtS: number): { seconds: number; fromIat: boolean } | undefined {
  if (claims.exp === undefined) return undefined;
  if (claims.iat !== undefined) return { seconds: claims.exp - claims.iat, fromIat: true };
  const left = claims.exp - receivedAtS;
  const minute = Math.round(left / 60) * 60;
  const seconds = Math.abs(left - minute) <= WHOLE_MINUTE_TOLERANCE_S ? minute : Math.round(left);
  return seconds > 0 ? { seconds, fromIat: false } : undefined;
}

export function jwtOf(
  claims: Claims,
  again: Claims | undefined,
  loginEmail: string | undefined,
  receivedAtS: number,
): { jwt: CalibratedJwt; notes: string[] } {
  const notes: string[] = [];
  const jwt: CalibratedJwt = {};
  const alg = String(claims.header.alg);
  if (SIGNED_ALGS.includes(alg)) jwt.alg = alg;
  else notes.push(`alg ${alg} is not one the sandbox signs with (${SIGNED_ALGS.join(", ")}); the sandbox's default is kept`);
  jwt.typ = typeof claims.header.typ === "string" ? claims.header.typ : "none";
  jwt.kid = claims.header.kid !== undefined;
  const order = headerOrderOf(claims.header);
  if (order) jwt.headerOrder = order;
  Object.assign(jwt, bookkeepingClaims(claims.payload, jwt.typ, notes));
  const lifetime = lifetimeOf(claims, receivedAtS);
  if (lifetime) jwt.ttl = durationText(lifetime.seconds);
  if (lifetime && !lifetime.fromIat) notes.push(`ttl ${jwt.ttl}: the JWT has no iat, so its exp less the time the answer came`);
  if (!lifetime) notes.push("the JWT has no exp (or it had passed), so its lifetime is unknown; the sandbox's default ttl is kept");
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

/**
 * The order the provider writes its header's alg, kid and typ in, when the sandbox would write them
 * otherwise (its own: alg, kid, typ with a kid; typ, alg without, as lcobucci/jwt does): golang-jwt
 * and jose write alg, then typ.
 */
export function headerOrderOf(header: Record<string, unknown>): HeaderMember[] | undefined {
  const order = Object.keys(header).filter((k): k is HeaderMember => (HEADER_MEMBERS as readonly string[]).includes(k));
  const sandbox = header.kid !== undefined ? HEADER_MEMBERS.filter((m) => m in header) : (["typ", "alg"] as const).filter((m) => m in header);
  return order.join() === sandbox.join() ? undefined : order;
}

/**
 * The names the sandbox's own bookkeeping claims take so that its token has the provider's claim
 * set: the client under client_id, or the provider's name for it (azp, cid), or none when its token
 * has none (but under typ JWT, where the login's token is told apart by it: kept, and noted); the
 * scopes under scope, scp, or none. Only what differs from the sandbox's default is returned.
 */
function bookkeepingClaims(
  payload: Record<string, unknown>,
  typ: string | undefined,
  notes: string[],
): Pick<CalibratedJwt, "clientClaim" | "scopeClaim"> {
  const out: Pick<CalibratedJwt, "clientClaim" | "scopeClaim"> = {};
  if (!("client_id" in payload)) {
    const named = CLIENT_CLAIM_NAMES.find((k) => typeof payload[k] === "string");
    if (named) out.clientClaim = named;
    else if (typ === "JWT")
      notes.push("client_id kept though the provider's token has no client claim: under typ JWT it tells the access token from the login's");
    else out.clientClaim = "none";
  }
  if (!("scope" in payload)) out.scopeClaim = SCOPE_CLAIM_NAMES.find((k) => typeof payload[k] === "string") ?? "none";
  return out;
}

/** A token's exp claim, decoded only (its signature is the provider's business); undefined when none or no JWT. */
export function expOf(token: string | undefined): number | undefined {
  if (!token) return undefined;
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === "number" ? exp : undefined;
  } catch {
    return undefined;
  }
}
