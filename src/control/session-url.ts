import { SessionUrlUnknown } from "../core/errors.js";
import { echo } from "../core/echo.js";
import { sessionBasePath } from "../core/session-path.js";

/**
 * The base URL a session's answer gives: the Host the control-plane request came with (so it is
 * the name the caller reached the sandbox by, a docker or CI service name included), and only the
 * path when the request had none (in-process through msw, HTTP/1.0).
 */
export function sessionBaseUrl(id: string, host: string | undefined): string {
  return host === undefined ? sessionBasePath(id) : `http://${host.trim()}${sessionBasePath(id)}`;
}

export function sessionUrlUnknown(id: string): SessionUrlUnknown {
  const shown = id === "" ? "" : ` '${echo(id, 64)}'`;
  return new SessionUrlUnknown(
    `There is no session${shown} for this base URL (/s/{session_id}): it was deleted, reaped after being idle, ended by a reset, or never created. Create a session with POST /__sandbox/sessions and configure the integration with the base_url it answers.`,
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
