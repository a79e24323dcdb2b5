import { createHash } from "node:crypto";
import { jwsSpans } from "../../core/jwt-runs.js";

/**
 * What the recording proxy writes in place of a secret, so a recording can be shared and still be
 * learnt from: the same value always becomes the same pseudonym (`redacted-<12 hex of its
 * SHA-256>`), so calibrate still tells a right secret from a wrong one and the payment token from
 * a JWT; a JWT keeps its header and payload (its claims: alg, exp, who) and loses its signature,
 * so it can be read and never replayed. The api_key is an identifier, not a secret: kept.
 */

/** Request and answer members whose values are credentials. */
const SECRET_MEMBERS = /^(api_secret|password|refresh_token|id_token|client_secret|secret)$/i;

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
  if (lower === "cookie" || lower === "set-cookie" || /secret|password|token/.test(lower)) return pseudonym(value);
  return withoutSignatures(value);
}

/** A body as the recording keeps it: a JSON body member by member, any text with its JWTs unsigned. */
export function recordedBody(text: string): string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return withoutSignatures(text);
  }
  return JSON.stringify(walk(json, ""));
}

function walk(value: unknown, key: string): unknown {
  if (typeof value === "string") return SECRET_MEMBERS.test(key) && !value.startsWith("eyJ") ? pseudonym(value) : withoutSignatures(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, key));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
  return value;
}
