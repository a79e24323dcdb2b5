import { jsonResponse, type Endpoint } from "../core/context.js";
import { MethodNotAllowed, NotFound } from "../core/errors.js";
import { printable } from "../core/printable.js";

/** GET /.well-known/jwks.json: the public keys that verify access tokens (none for HS256). */
export const jwksEndpoint: Endpoint = (request, ctx) => {
  if (request.method !== "GET" && request.method !== "HEAD") throw new MethodNotAllowed(request.method, "/.well-known/jwks.json", ["GET", "HEAD"]);
  // Short caching so clients re-fetch soon after a key rotation.
  return jsonResponse(200, ctx.ring.jwks(ctx.scenarios.acceptedKids()), { "cache-control": "public, max-age=60" });
};

/** GET /__sandbox/health: for readiness probes and the image's HEALTHCHECK. */
export const healthEndpoint: Endpoint = (request, ctx) => {
  if (request.method !== "GET" && request.method !== "HEAD") throw new MethodNotAllowed(request.method, "/__sandbox/health", ["GET", "HEAD"]);
  return jsonResponse(200, { status: "ok", version: ctx.version, scenarios: ctx.scenarios.loaded.map((s) => s.name) });
};

const KNOWN_ROUTES = [
  "POST /api/v2/auth/token",
  "ANY /api/v2/payment/*",
  "POST /api/v2/payment/init",
  "ANY /api/v2/cashout/*",
  "POST /api/login_check",
  "GET /.well-known/jwks.json",
  "GET /__sandbox/health",
];

/** Anything else: 404 that lists what the sandbox does serve, with a hint for near misses. */
export const notFoundEndpoint: Endpoint = (request, _ctx, trace) => {
  const hint = nearMiss(request.path);
  throw new NotFound(`No endpoint at ${request.method} ${printablePath(trace.shown.path)}.${hint} This sandbox serves: ${KNOWN_ROUTES.join(", ")}.`);
};

function nearMiss(path: string): string {
  const lower = path.toLowerCase().replace(/\/+$/, "");
  const known = ["/api/v2/auth/token", "/api/login_check", "/.well-known/jwks.json", "/__sandbox/health"];
  const match = known.find((k) => k === lower);
  if (match) return ` Did you mean ${match} (exact case, no trailing slash)?`;
  if (/^\/api\/v[013-9]\//.test(lower)) return " This sandbox simulates version 2 of the API: use the /api/v2/ prefix.";
  return "";
}

function printablePath(shown: string): string {
  return shown.length > 200 ? `${printable(shown, 200)}...` : printable(shown, 200);
}
