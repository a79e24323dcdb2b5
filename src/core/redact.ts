import { createHash } from "node:crypto";

/**
 * Redaction for anything secret (api_secret, passwords, payment tokens, JWTs) that has to be
 * mentioned in a log line, the journal or an error message: the first 4 characters, the length
 * and a short hash, so two values can be told apart without either being readable.
 */
export function redact(secret: string): string {
  const hash = createHash("sha256").update(secret).digest("hex").slice(0, 8);
  const head = secret.length > 12 ? secret.slice(0, 4) : "";
  return `${head}...(${secret.length} chars, sha256:${hash})`;
}

/** Query parameter names that carry a bearer token (refused on protected endpoints, see bearer.ts). */
export const TOKEN_QUERY_KEYS: readonly string[] = ["access_token", "token", "jwt", "bearer"];

/** Query parameters whose values are secrets wherever they appear. */
const SECRET_QUERY_KEYS = new Set([...TOKEN_QUERY_KEYS, "api_secret", "password", "payment_token", "secret"]);

/** The query string with every secret-looking parameter value replaced by its redaction. */
export function redactQuery(query: string): string {
  if (!query) return "";
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const key = safeDecode(pair.slice(0, eq)).toLowerCase();
      return SECRET_QUERY_KEYS.has(key) ? `${pair.slice(0, eq)}=${redact(safeDecode(pair.slice(eq + 1)))}` : pair;
    })
    .join("&");
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}
