import { ConfigError } from "../core/config.js";
import { ControlJsonRequired, CrossSiteRequest, HostNotAllowed } from "../core/errors.js";
import { echo } from "../core/echo.js";
import { headerValue, type SandboxRequest } from "../core/http-types.js";
import { isJsonContentType } from "../core/json-body.js";
import { printable } from "../core/printable.js";

/**
 * Who may drive the control plane. With no admin token (the default) it trusts whoever reaches it,
 * and a web page open in the developer's browser reaches 127.0.0.1 too. Three rules keep pages
 * out while scripts, tests and CI (which send no Origin and use loopback, IP or service names) pass:
 * - the Host must be one the sandbox answers to, or a page could point a name it owns at this
 *   machine (DNS rebinding) and read the answers as its own;
 * - an Origin other than the sandbox's own, `Origin: null` or `Sec-Fetch-Site: cross-site` is a
 *   page of another site;
 * - state-changing calls must be declared JSON, which a page cannot send to another origin without
 *   a CORS preflight, and the sandbox never grants CORS (it sends no Access-Control-* header).
 */

/** Hosts the control plane answers to beyond those always allowed (see `alwaysAllowed`). */
export interface HostPolicy {
  /** `*`: any Host at all, DNS rebinding included. */
  readonly any: boolean;
  /** Exact names, lower-case, without a trailing dot. */
  readonly names: readonly string[];
  /** From `.example.test` entries: that name and every name under it. */
  readonly suffixes: readonly string[];
}

/** `allowedHosts` (`--allowed-hosts`) checked once at start; a bad entry says how to write one. */
export function hostPolicy(entries: readonly string[] = []): HostPolicy {
  if (!Array.isArray(entries)) throw new ConfigError("allowedHosts must be a list of host names", "allowedHosts");
  const names: string[] = [];
  const suffixes: string[] = [];
  let any = false;
  for (const raw of entries) {
    const entry = typeof raw === "string" ? raw.trim().toLowerCase() : "";
    if (entry === "*") {
      any = true;
      continue;
    }
    const wildcard = entry.startsWith(".");
    const name = hostName(wildcard ? entry.slice(1) : entry);
    if (name === undefined) {
      throw new ConfigError(
        `allowedHosts entry '${printable(String(raw), 100)}' is not a host name: write the name alone, without scheme or port (sandbox.ci.example), '.example.test' for a name and every name under it, or '*' for any host (unsafe: it lets web pages in through DNS rebinding)`,
        "allowedHosts",
      );
    }
    (wildcard ? suffixes : names).push(name);
  }
  return { any, names, suffixes };
}

/** A host name or IP literal as the policy compares it (lower-case, no trailing dot), or undefined. */
export function hostName(text: string): string | undefined {
  const t = text.toLowerCase();
  if (/^\[[0-9a-f:.]+\]$/.test(t)) return t;
  if (/^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(t)) return t.replace(/\.$/, "");
  return undefined;
}

/**
 * Names that cannot be a rebinding attacker's: loopback names, IP literals (rebinding needs a name
 * whose DNS answer the attacker controls) and single-label names such as `sandbox` (docker, compose
 * and CI service names), which nobody can register publicly.
 */
function alwaysAllowed(name: string): boolean {
  return name === "localhost" || name.endsWith(".localhost") || isIpLiteral(name) || !name.includes(".");
}

function isIpLiteral(name: string): boolean {
  return name.startsWith("[") || /^\d{1,3}(\.\d{1,3}){3}$/.test(name);
}

/** Whether binding here keeps the sandbox to this machine (no start warning without an admin token). */
export function isLoopbackAddress(host: string): boolean {
  // --host takes IPv6 without brackets (::1); a Host header has them.
  const name = hostName(host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);
  if (name === undefined) return false;
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127(\.\d{1,3}){3}$/.test(name);
}

/**
 * Refuses a request a web page made: a Host the sandbox does not answer to, or another site's
 * Origin. A request without a Host (in-process through msw, or HTTP/1.0) has no name a page could
 * have chosen; browsers always send one.
 */
export function assertFromThisSite(request: SandboxRequest, policy: HostPolicy): void {
  assertNotCrossSite(request, assertHostAllowed(request, policy));
}

/** Refuses a Host the sandbox does not answer to (DNS rebinding); returns the Host sent, if any. */
export function assertHostAllowed(request: SandboxRequest, policy: HostPolicy): string | undefined {
  const host = headerValue(request, "host");
  if (host !== undefined) {
    const name = hostOf(host);
    if (
      name === undefined ||
      !(policy.any || alwaysAllowed(name) || policy.names.includes(name) || policy.suffixes.some((s) => name === s || name.endsWith(`.${s}`)))
    ) {
      throw new HostNotAllowed(
        `The control plane does not answer to Host '${echo(host, 100)}': a web page can point a name it owns at this machine (DNS rebinding) and read every session's secrets through it. Call the sandbox by localhost, an IP address or a single-label name (a docker or CI service name such as 'sandbox'), or allow this name with --allowed-hosts ${name === undefined ? "<host name>" : echo(nameAsSent(host), 100)} (MERCHANT_SANDBOX_ALLOWED_HOSTS, createSandbox({ allowedHosts })).`,
      );
    }
  }
  return host;
}

/**
 * Whether another site's page may be the caller: the control plane's operations refuse it; the
 * QA page's own files (public, with nothing of any session in them) only check the Host.
 */
function assertNotCrossSite(request: SandboxRequest, host: string | undefined): void {
  const fix =
    "a page open in your browser could otherwise reset the sandbox or read every session. Call the control plane from a script, a test or CI (curl, fetch in Node), not from a web page.";
  if (headerValue(request, "sec-fetch-site")?.trim().toLowerCase() === "cross-site") {
    throw new CrossSiteRequest(`The control plane refuses requests from web pages of another site (Sec-Fetch-Site: cross-site): ${fix}`);
  }
  const origin = headerValue(request, "origin");
  if (origin !== undefined && !isOwnOrigin(origin, host)) {
    const own = host === undefined ? "" : ` (this sandbox is http://${echo(host, 100)})`;
    throw new CrossSiteRequest(
      `The control plane refuses requests from web pages: Origin '${echo(origin, 100)}' is not the sandbox's own${own}; ${fix}`,
    );
  }
}

/** The name in a Host header (`name`, `name:port`, `[v6]:port`); the port plays no part. */
function hostOf(header: string): string | undefined {
  const m = HOST_HEADER.exec(header.trim());
  return m ? hostName(m[1]!) : undefined;
}

const HOST_HEADER = /^(\[[^\]]*\]|[^:]*)(?::\d{1,5})?$/;

/**
 * The name of a Host header as it was sent, for the --allowed-hosts hint (which takes any case):
 * lower-cased, a secret sent as the Host would no longer be recognised by the redaction.
 */
function nameAsSent(header: string): string {
  return HOST_HEADER.exec(header.trim())?.[1] ?? header;
}

/**
 * `http://` + Host, or `https://` + Host behind a TLS-terminating proxy: a page the sandbox itself
 * served. `null` (a sandboxed frame, a file: page, a cross-site redirect) never is.
 */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  const given = urlOrigin(origin.trim());
  return given !== undefined && (given === urlOrigin(`http://${host.trim()}`) || given === urlOrigin(`https://${host.trim()}`));
}

function urlOrigin(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A state-changing call must say `Content-Type: application/json` (an empty body too): a page may
 * send a form or text/plain anywhere unasked, but JSON only after a CORS preflight, which fails.
 * DELETE needs no such rule: it is not a CORS-simple method, so browsers preflight it already.
 */
const STATE_CHANGING = ["POST", "PUT", "PATCH"];

/** `shownPath`: the request's path as redacted for echoes (see redact.ts). */
export function assertJsonDeclared(request: SandboxRequest, shownPath: string): void {
  const contentType = headerValue(request, "content-type");
  if (!STATE_CHANGING.includes(request.method) || isJsonContentType(contentType)) return;
  const got = contentType === undefined ? "no Content-Type" : `Content-Type: ${echo(contentType, 100)}`;
  const host = headerValue(request, "host");
  const url = `${host === undefined ? "<sandbox URL>" : `http://${echo(host, 100)}`}${printable(shownPath, 200)}`;
  throw new ControlJsonRequired(
    `${request.method} on the control plane needs 'Content-Type: application/json', even with an empty body (the request has ${got}): that keeps web pages, which can send forms and text unasked, from changing the sandbox. With curl: curl -X ${request.method} -H 'content-type: application/json' ${url}`,
  );
}

/**
 * The admin token, checked at start: an empty one would leave the plane open while looking set,
 * and a short one can be guessed by a page or a neighbour trying tokens.
 */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

export function adminTokenSetting(token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  const fix = "Use a random one, e.g. from `openssl rand -hex 16`, or leave the option out to run without one on a loopback address.";
  if (typeof token !== "string" || token === "") {
    throw new ConfigError(`adminToken is empty: it would leave the control plane open to anyone while looking set. ${fix}`, "adminToken");
  }
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `adminToken must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters, got ${token.length}: a short token can be guessed by a web page or a neighbour on the network trying tokens. ${fix}`,
      "adminToken",
    );
  }
  return token;
}
