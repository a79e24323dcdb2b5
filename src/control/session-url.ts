import type { EndpointName } from "../core/context.js";
import { SessionCredentialsMismatch, SessionUrlUnknown } from "../core/errors.js";
import { printable } from "../core/printable.js";

/**
 * A session's base URL: `/s/{session_id}` in front of any path of the merchant API, so a test
 * configures its integration with one URL and every request under it lands in that session's
 * journal and report, whatever its credentials (none, in the query, another session's). `/s/`
 * collides with no path of the merchant API (they start with /api/ or /.well-known/) nor with the
 * control plane (/__sandbox/).
 */
export const SESSION_URL_PREFIX = "/s/";

/** The path of a session's base URL. */
export function sessionBasePath(id: string): string {
  return `${SESSION_URL_PREFIX}${id}`;
}

/**
 * The base URL a session's answer gives: the Host the control-plane request came with (so it is
 * the name the caller reached the sandbox by, a docker or CI service name included), and only the
 * path when the request had none (in-process through msw, HTTP/1.0).
 */
export function sessionBaseUrl(id: string, host: string | undefined): string {
  return host === undefined ? sessionBasePath(id) : `http://${host.trim()}${sessionBasePath(id)}`;
}

/** The session id of a path under the prefix, and the path under the base URL (`/` when nothing follows). */
export function splitSessionPath(path: string): { id: string; rest: string } {
  const end = path.indexOf("/", SESSION_URL_PREFIX.length);
  return end < 0
    ? { id: path.slice(SESSION_URL_PREFIX.length), rest: "/" }
    : { id: path.slice(SESSION_URL_PREFIX.length, end), rest: path.slice(end) };
}

export function sessionUrlUnknown(id: string): SessionUrlUnknown {
  const shown = id === "" ? "" : ` '${printable(id, 64)}'`;
  return new SessionUrlUnknown(
    `There is no session${shown} for this base URL (/s/{session_id}): it was deleted, reaped after being idle, ended by a reset, or never created. Create a session with POST /__sandbox/sessions and configure the integration with the base_url it answers.`,
  );
}

/**
 * The refusal of credentials that are not the base URL's session's. Names neither the credentials
 * nor the other session: only what to change.
 */
export function sessionCredentialsMismatch(id: string, endpoint: EndpointName, otherIsSession: boolean): SessionCredentialsMismatch {
  const whose = otherIsSession ? "another session's merchant" : "a merchant that belongs to no session";
  const challenge = endpoint === "token" ? "api-key" : endpoint === "login" ? undefined : "bearer";
  return new SessionCredentialsMismatch(
    `This request was sent under the base URL of session '${id}' but carries the credentials of ${whose}. Use this session's credentials (POST /__sandbox/sessions answered them; GET /__sandbox/sessions/${id} shows them again), or send the request to the base_url of the session the credentials belong to.`,
    challenge,
  );
}

/**
 * An answer's links under a session's base URL: a root-relative `Location` (payment/init's new
 * payment) or `Link` target (the deprecated login's successor) gets the base path in front, so a
 * client that follows it stays under its session's base URL, as it would stay on the provider's host.
 */
export function rebaseLinks(headers: Record<string, string>, basePath: string): Record<string, string> {
  const location = headers.location;
  const link = headers.link;
  const rootRelative = (v: string | undefined) => typeof v === "string" && v.startsWith("/") && !v.startsWith("//");
  if (!rootRelative(location) && !link?.includes("</")) return headers;
  const out = { ...headers };
  if (rootRelative(location)) out.location = basePath + location;
  if (link !== undefined) out.link = link.replace(/<\/(?!\/)/g, `<${basePath}/`);
  return out;
}
