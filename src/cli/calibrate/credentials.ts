import { jwsSpans } from "../../core/jwt-runs.js";

/**
 * What calibrate never writes: a credential the provider gave the test merchant (a token, a
 * session, a code), which is live there. The provider's own JWTs and the merchant's secrets are
 * recognised where they stand whole (answer-templates.ts, scrub.ts); this finds them inside a
 * longer text (a redirect URL, a message), reading it once.
 */

/** What a credential is written as. */
export const REDACTED = "redacted-by-calibrate";

/** A URL member that carries a credential (`?access_token=…`, `&code=…`, `#id_token=…`), up to its end. */
const URL_CREDENTIAL =
  /([?&#;](?:access_token|refresh_token|id_token|token|code|session|sessionid|sid|jsessionid|key|api_key|apikey|secret|password|signature|sig))=[^&#;\s"'<>]*/gi;

/** `text` with every JWT and every credential-carrying URL member in it replaced, and how many were. */
export function withoutCredentials(text: string): { text: string; replaced: number } {
  let replaced = 0;
  let out = "";
  let at = 0;
  for (const [start, end] of jwsSpans(text)) {
    out += `${text.slice(at, start)}${REDACTED}`;
    at = end;
    replaced++;
  }
  out += text.slice(at);
  out = out.replace(URL_CREDENTIAL, (_, name: string) => {
    replaced++;
    return `${name}=${REDACTED}`;
  });
  return { text: out, replaced };
}
