import { shownText } from "./echo.js";
import { problemType, STATUS_TITLES } from "./error-catalogue.js";
import { InternalError, SandboxError } from "./errors.js";
import type { SandboxResponse } from "./http-types.js";
import type { SecretView } from "./secret-index.js";

/**
 * The one mapper from a refusal to a response: an RFC 9457 `application/problem+json` body that
 * also carries the OAuth members `error` and `error_description`, so both kinds of client parse it,
 * plus the `WWW-Authenticate` challenge of RFC 6750 where the error calls for one. The `type` and
 * `title` come from the error catalogue (error-catalogue.ts), as do the documents that describe them.
 */

export const REALM = "merchant-api";

export function statusTitle(status: number): string {
  return STATUS_TITLES[status] ?? "Error";
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  error?: string;
  error_description: string;
  instance: string;
}

/**
 * Builds the response for any thrown value: a SandboxError as it is, anything else as a 500.
 * `path` becomes `instance` as given: pass the redacted path (RequestTrace.shown, redactUrl).
 * `secrets`: what the description's echoes of the request are redacted against (asRefusal).
 */
export function problemResponse(thrown: unknown, path: string, secrets: SecretView, extraHeaders?: Record<string, string>): SandboxResponse {
  const err = asRefusal(thrown, secrets);
  const headers: Record<string, string> = {
    "content-type": "application/problem+json",
    "cache-control": "no-store",
    ...extraHeaders,
    ...err.headers,
  };
  const challenge = challengeFor(err);
  if (challenge) headers["www-authenticate"] = challenge;
  return { status: err.status, headers, body: JSON.stringify(problemBody(err, path)) };
}

/**
 * A SandboxError as an answer shows it; anything else (a bug of ours) as a 500 internal_error.
 * Every answer to a refusal starts here, so this is where what the request sent and the refusal
 * quotes is redacted (echo.ts): no surface can answer a refusal without giving the secrets.
 */
export function asRefusal(thrown: unknown, secrets: SecretView): SandboxError {
  if (!(thrown instanceof SandboxError)) {
    return new InternalError(
      "The sandbox failed to handle this request. This is a bug in merchant-sandbox, not in your request; the server log has the details.",
    );
  }
  const shown = shownText(thrown.said, secrets);
  return shown === thrown.said ? thrown : thrown.withDescription(shown);
}

/** The problem+json body of a refusal (also what a profile that leaves refusal.body out answers). */
export function problemBody(err: SandboxError, path: string): ProblemBody {
  return {
    type: problemType(err.code),
    title: statusTitle(err.status),
    status: err.status,
    detail: err.description,
    code: err.code,
    ...(err.error ? { error: err.error } : {}),
    error_description: err.description,
    instance: path,
  };
}

/** The WWW-Authenticate challenge a refusal calls for (RFC 6750), if any. */
export function challengeFor(err: SandboxError): string | undefined {
  if (err.challenge === "api-key") {
    return `ApiKey realm="${REALM}", error="${err.error}"`;
  }
  if (err.challenge !== "bearer" && err.challenge !== "bare-bearer") return undefined;
  const params = [`realm="${REALM}"`];
  // RFC 6750 §3.1: a request without any credentials gets a bare challenge with no error code.
  if (err.error && err.challenge === "bearer") {
    params.push(`error="${err.error}"`);
    params.push(`error_description="${quotedStringSafe(err.description)}"`);
  }
  if (err.scope) params.push(`scope="${err.scope}"`);
  return `Bearer ${params.join(", ")}`;
}

/**
 * RFC 6750 limits error_description to printable ASCII without `"` and `\`; anything else
 * (including CR/LF, which would split the header) is replaced, so no input can inject a header.
 */
export function quotedStringSafe(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, (ch) => (ch === '"' ? "'" : "?"));
}

/**
 * A value rendered into a header (a profile's `headers`): every character outside visible ASCII,
 * space and tab, written as its UTF-8 bytes %-escaped (`Токен` → `%D0%A2%D0%BE%D0%BA%D0%B5%D0%BD`,
 * CR LF → `%0D%0A`), so no value can end the header or make Node refuse it. `%` itself is kept.
 */
export function headerValueSafe(text: string): string {
  return text.replace(/[^\t\x20-\x7e]+/g, (run) => {
    let escaped = "";
    // A lone surrogate becomes U+FFFD's bytes, as Buffer writes it, rather than an error.
    for (const byte of Buffer.from(run, "utf8")) escaped += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    return escaped;
  });
}
