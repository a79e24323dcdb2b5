import type { RequestIdShape } from "../../profiles/request-id.js";
import { headerCase } from "../../profiles/shaped-schemas.js";
import type { Answer } from "./observations.js";
import { counterPlaceholder, perRequestPlaceholder, readUnix, type Varying } from "./per-request.js";
import { withoutCredentials } from "./credentials.js";
import { isJwt } from "./provider-jwt.js";

/**
 * The headers of the provider's answers a profile records. Left out: what the transport or the
 * server software adds whatever the API (Date, Connection, Content-Length, Transfer-Encoding,
 * Keep-Alive, Server, Content-Encoding, Vary: the sandbox's own HTTP layer sends those), what has
 * its own key in a profile (Content-Type, WWW-Authenticate), and the sandbox's own headers when
 * the provider is a sandbox (X-Sandbox-*), which every profile-shaped refusal carries anyway.
 */
const NOT_RECORDED: ReadonlySet<string> = new Set([
  "date",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "server",
  "content-encoding",
  "vary",
  "content-type",
  "www-authenticate",
]);

export function recorded(name: string): boolean {
  return !NOT_RECORDED.has(name) && !name.startsWith("x-sandbox-");
}

/**
 * Why a header's value is a credential the provider gave the test merchant (a live one at the
 * provider), never written into a profile; undefined when it is not. A cookie always; a name that
 * says token, session, secret, key, auth, cookie, password, signature or credential; a JWT, or one
 * inside it (a `Location` with `#access_token=`); a long random-looking value.
 */
export function credentialHeader(name: string, value: string): string | undefined {
  if (name === "set-cookie") return "a cookie";
  if (/token|session|secret|key|auth|cookie|password|signature|credential/i.test(name)) return "named like a credential";
  if (isJwt(value)) return "a JWT";
  if (withoutCredentials(value).replaced > 0) return "a token inside it";
  if (value.length >= 32 && /^[A-Za-z0-9+/=_.~-]+$/.test(value)) return "a long random-looking value";
  return undefined;
}

/**
 * An answer's recorded headers as profile templates (lower-case names): a value that varied between
 * identical probes becomes the placeholder of its shape (the sandbox makes a fresh one each time),
 * a counting one a counter's (a request id's shape is added to `found.requestIds`),
 * a credential (credentialHeader) is left out and noted in `leftOut` (name → why), anything else
 * is kept as it came.
 */
export function headerTemplates(
  answer: Answer,
  varying: Varying,
  nowS: number,
  found: { leftOut?: Map<string, string>; requestIds?: Set<RequestIdShape> } = {},
): Map<string, string> {
  const { leftOut, requestIds } = found;
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (!recorded(name)) continue;
    const counter = varying.counters.get(name);
    // A Unix time that moved (a limit's reset time) is a time, not a count.
    const unix = counter !== undefined ? readUnix(Number(value), nowS) : undefined;
    if (unix !== undefined) {
      out.set(name, `{{now:${unix}}}`);
      continue;
    }
    if (counter !== undefined && /^\d{1,15}$/.test(value)) {
      out.set(name, counterPlaceholder(name, counter, answer.headers));
      continue;
    }
    const per = name !== "set-cookie" && varying.headers.has(name) ? perRequestPlaceholder(value, nowS) : undefined;
    if (per) {
      if (per.requestId) requestIds?.add(per.requestId);
      out.set(name, per.placeholder);
      continue;
    }
    const credential = credentialHeader(name, value);
    if (credential !== undefined) leftOut?.set(name, credential);
    else out.set(name, value);
  }
  return out;
}

/** The headers every answer carries with the same template: the profile-wide `headers`. */
export function commonHeaders(all: ReadonlyArray<Map<string, string>>): Map<string, string> {
  const common = new Map(all[0] ?? []);
  for (const h of all.slice(1)) for (const [name, value] of common) if (h.get(name) !== value) common.delete(name);
  return common;
}

/** A map of headers as a profile writes them, without those in `minus`; undefined when none is left. */
export function headersObject(h: Map<string, string>, ...minus: ReadonlyArray<Map<string, string>>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [name, value] of h) if (!minus.some((m) => m.get(name) === value)) out[headerCase(name)] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}
