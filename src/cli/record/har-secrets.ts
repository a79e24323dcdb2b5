import { createHash } from "node:crypto";
import { jwsSpans } from "../../core/jwt-runs.js";
import { isSecretName } from "../../core/redact.js";

/**
 * What the recording proxy writes in place of a secret, so a recording can be shared and still be
 * learnt from: the same value always becomes the same pseudonym (`redacted-<12 hex of its
 * SHA-256>`), so calibrate still tells a right secret from a wrong one and the payment token from
 * a JWT; a JWT keeps its header and payload (its claims: alg, exp, who) and loses its signature,
 * so it can be read and never replayed. The api_key is an identifier, not a secret: kept.
 */

/**
 * Names the sandbox's redaction takes for secret (core/redact.ts) whose values are not: what a
 * client branches on and calibrate learns from (token_type, expires_at, a challenge header).
 */
const NOT_SECRET = /(?:^|[_-])(?:type|in|at)$|authenticate$/i;

/** A member, parameter or header whose name says it holds a credential (api_key is an identifier, and kept). */
function secretNamed(name: string): boolean {
  return isSecretName(name) && !NOT_SECRET.test(name);
}

/** A value as the recording keeps it: a secret-named one as a pseudonym (a JWT unsigned instead), any JWT in it unsigned. */
function recordedValue(name: string, value: string): string {
  return secretNamed(name) && !value.startsWith("eyJ") ? pseudonym(value) : withoutSignatures(value);
}

export function pseudonym(value: string): string {
  return `redacted-${createHash("sha256").update(value).digest("hex").slice(0, 12)}`;
}

/** Every JWT in a text, its signature replaced. */
export function withoutSignatures(text: string): string {
  let out = "";
  let at = 0;
  for (const [start, end] of jwsSpans(text)) {
    const token = text.slice(start, end);
    const cut = token.lastIndexOf(".") + 1;
    out += text.slice(at, start) + token.slice(0, cut) + createHash("sha256").update(token.slice(cut)).digest("base64url").slice(0, 22);
    at = end;
  }
  return out + text.slice(at);
}

/** A header's value as the recording keeps it: credentials made pseudonyms, JWTs unsigned. */
export function recordedHeader(name: string, value: string): string {
  const lower = name.toLowerCase();
  if (lower === "authorization") {
    const m = /^(\S+)([ \t]+)(.*)$/.exec(value);
    if (!m) return value;
    return `${m[1]}${m[2]}${m[3]!.startsWith("eyJ") ? withoutSignatures(m[3]!) : m[3] === "" ? "" : pseudonym(m[3]!)}`;
  }
  if (lower === "cookie" || lower === "set-cookie") return pseudonym(value);
  return recordedValue(lower, value);
}

/** A query string or form body as the recording keeps it, parameter by parameter. */
export function recordedParams(params: URLSearchParams): URLSearchParams {
  return new URLSearchParams([...params].map(([name, value]) => [name, recordedValue(name, value)]));
}

/**
 * A body as the recording keeps it: JSON member by member, a form (`mimeType`
 * application/x-www-form-urlencoded) parameter by parameter, any other text with its JWTs unsigned.
 */
export function recordedBody(text: string, mimeType = ""): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (/application\/x-www-form-urlencoded/i.test(mimeType)) return recordedParams(new URLSearchParams(text)).toString();
    return withoutSignatures(text);
  }
  return JSON.stringify(walk(json, ""));
}

function walk(value: unknown, key: string): unknown {
  if (typeof value === "string") return recordedValue(key, value);
  if (Array.isArray(value)) return value.map((v) => walk(v, key));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
  return value;
}
