import { idShapeOf } from "../../profiles/companion-token.js";
import type { RequestIdShape } from "../../profiles/request-id.js";
import { headersObject, headerTemplates } from "./answer-headers.js";
import { isObject, keyOf, leaves, mapLeaves, type Path, pathText } from "./json-paths.js";
import type { Observation } from "./observations.js";
import {
  isEmpty,
  nowPlaceholder,
  perRequestByShape,
  perRequestPlaceholder,
  readTime,
  requestIdShape,
  TIME_TOLERANCE_S,
  type Varying,
} from "./per-request.js";
import { REDACTED, withoutCredentials } from "./credentials.js";
import { textTemplate } from "./refusal-reading.js";
import { type Claims, isJwt, lifetimeOf } from "./provider-jwt.js";

/**
 * The provider's success answers as a profile's templates: the token and login answer (the JWT and
 * its times as placeholders), payment/init's (the values sent, the payment's id and times) and the
 * protected call's (the merchant's id); per-request values in every one.
 */

export interface CalibratedAnswer {
  status: number;
  contentType?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** A body that is not JSON, as a text template. */
  text?: string;
  empty?: true;
}

/** What stands in for a secret-looking constant calibrate will not copy into a profile. */
export { REDACTED } from "./credentials.js";

/** What the templates read of the whole calibration. */
export interface Ctx {
  varying: Varying;
  nowS: number;
  wide: Map<string, string>;
  /** The request-id shapes met, the first is the profile's `requestId`. */
  requestIds: Set<RequestIdShape>;
}

/** A success answer as a profile writes it: status, content type, its own headers, body or no body. */
export function answerOf(o: Observation, body: unknown, ctx: Ctx): CalibratedAnswer {
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
  const raw = o.answer.text;
  const text = raw === undefined ? undefined : textTemplate(withoutCredentials(raw).text, undefined, [{ name: "now", seconds: ctx.nowS }]);
  if (!empty && text !== undefined) {
    return { status: o.answer.status, contentType: o.answer.headers["content-type"] ?? "text/plain", ...(headers && { headers }), text };
  }
  return {
    status: o.answer.status,
    ...(!empty && { contentType: o.answer.contentType ?? "application/json" }),
    ...(headers && { headers }),
    ...(empty ? { empty: true as const } : { body }),
  };
}

/** A leaf that varied between identical probes, or a time near now: its per-request placeholder. */
function perRequestLeaf(path: Path, v: unknown, ctx: Ctx): string | undefined {
  const per = (ctx.varying.keys.has(keyOf(path)) ? perRequestPlaceholder(v, ctx.nowS) : undefined) ?? perRequestByShape(v);
  if (per?.requestId) ctx.requestIds.add(per.requestId);
  if (per) return per.placeholder;
  return nowPlaceholder(v, ctx.nowS);
}

/**
 * The protected call's 200: the merchant's id {{merchant_id}}, the sandbox's own placeholder answer
 * (when the provider is a sandbox) {{sandbox}}, per-request values; the rest as it came.
 */
export function protectedTemplate(o: Observation, claims: Claims, loginEmail: string | undefined, ctx: Ctx): unknown {
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
    return typeof v === "string" ? credentialFree(path, v) : v;
  };
  return walk(o.answer.json, []);
}

export function successTemplate(json: unknown, jwt: string, claims: Claims, ctx: Ctx): { body: unknown; notes: string[] } {
  const notes: string[] = [];
  const ttl = lifetimeOf(claims, ctx.nowS)?.seconds;
  const body = mapLeaves(json, (path, v) => {
    if (typeof v === "string") {
      if (v === jwt) return "{{access_token}}";
      const at = readTime(v);
      // The token's own times first: its iat is also "now".
      if (at !== undefined && near(at.seconds, claims.exp)) return `{{expires_at:${at.format}}}`;
      if (at !== undefined && near(at.seconds, claims.iat)) return `{{issued_at:${at.format}}}`;
      // Before the per-request shapes: a refresh token differs per answer too, and may look like a request id.
      const companion = companionTemplate(path, v);
      if (companion) {
        notes.push(`${pathText(path)}: another token, written as ${companion} (a fresh one per answer, never accepted)`);
        return companion;
      }
      const per = perRequestLeaf(path, v, ctx);
      if (per) return per;
      if (isJwt(v) || looksSecret(path, v)) {
        notes.push(`${pathText(path)}: a token-like value, written as "${REDACTED}"`);
        return REDACTED;
      }
      const inside = withoutCredentials(v);
      if (inside.replaced > 0) notes.push(`${pathText(path)}: a token inside it, written as "${REDACTED}"`);
      return inside.text;
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

/**
 * A token beside the access token (a refresh token, an id_token): the placeholder of its kind and
 * shape, any short prefix kept (`rt_{{refresh_token:hex-48}}`). A JWT is one whatever its name; an
 * opaque value is one under a name that says refresh or id_token.
 */
function companionTemplate(path: Path, v: string): string | undefined {
  const key = keyOf(path);
  const kind = /^id_?token$/i.test(key) ? "id_token" : "refresh_token";
  if (isJwt(v)) return `{{${kind}:jwt}}`;
  if (!/refresh|^id_?token$/i.test(key) || !looksSecret(path, v)) return undefined;
  if (requestIdShape(v) === "uuid") return `{{${kind}:uuid}}`;
  const id = idShapeOf(v);
  return id && `${id.prefix}{{${kind}:${id.shape}}}`;
}

/** How far a lifetime in an answer may be from the JWT's exp - iat and still be it. */
const LIFETIME_TOLERANCE_S = 2;

function near(seconds: number, target: number | undefined): boolean {
  return target !== undefined && Math.abs(seconds - target) <= TIME_TOLERANCE_S;
}

/** A long opaque string under a token-ish name, or one that only a machine would write: not copied. */
function looksSecret(path: Path, value: string): boolean {
  if (/\s/.test(value) || /^https?:\/\//.test(value)) return false;
  if (/token|secret|password|refresh|key|signature|session|cookie|credential/i.test(keyOf(path)) && value.length >= 16) return true;
  return value.length >= 32 && /^[A-Za-z0-9+/=_.~-]+$/.test(value);
}

export function paymentInitTemplate(json: unknown, sent: Record<string, string | number>, ctx: Ctx): unknown {
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
    if (/merchant/i.test(key)) return "{{merchant_id}}";
    // The payment's id differs between the two creations too: its name says which it is. A request
    // id (its name says request, trace or correlation) varies per request, not per payment.
    if (/(^|_|[a-z])(id|Id|ID)$/.test(key) && !/request|trace|correlation/i.test(key)) return "{{payment_id}}";
    const per = perRequestLeaf(path, v, ctx);
    if (per) return per;
    return credentialFree(path, v);
  });
}

/** A string leaf with no credential in it: whole (a JWT, named or shaped like a secret), or inside it. */
function credentialFree(path: Path, v: string): string {
  return isJwt(v) || looksSecret(path, v) ? REDACTED : withoutCredentials(v).text;
}
