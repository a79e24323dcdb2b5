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

/**
 * A query value is redacted when its name says it is secret (any spelling of token, secret,
 * password, auth, jwt, credential: accessToken, client_secret, id_token …) or when it has the
 * shape of a JWT, whatever the parameter is called.
 */
const SECRET_NAME = /(token|secret|passw|pwd|auth|jwt|credential|bearer)/i;
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.?[A-Za-z0-9_-]*$/;

/** The query string with every secret-looking parameter value replaced by its redaction. */
export function redactQuery(query: string): string {
  if (!query) return "";
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return JWT_SHAPE.test(safeDecode(pair)) ? redact(safeDecode(pair)) : pair;
      const key = safeDecode(pair.slice(0, eq));
      const value = safeDecode(pair.slice(eq + 1));
      return SECRET_NAME.test(key) || JWT_SHAPE.test(value) ? `${pair.slice(0, eq)}=${redact(value)}` : pair;
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

/**
 * The path with every segment that has the shape of a JWT redacted: a client that puts its token in
 * the URL (`/api/v2/payment/eyJ…`) must not see it in clear in the log, the journal or a refusal.
 */
export function redactPath(path: string): string {
  if (!path.includes("eyJ")) return path;
  return path
    .split("/")
    .map((segment) => (JWT_SHAPE.test(safeDecode(segment)) ? redact(safeDecode(segment)) : segment))
    .join("/");
}
