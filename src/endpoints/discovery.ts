import { jsonResponse, type Endpoint } from "../core/context.js";

/** GET /.well-known/jwks.json: the public keys that verify access tokens (none for HS256); its method was checked before (request-form.ts). */
export const jwksEndpoint: Endpoint = (_request, ctx) => {
  // Short caching so clients re-fetch soon after a key rotation. A key still on its way is waited
  // for: a set without it would be cached by clients for a minute.
  const jwks = () => jsonResponse(200, ctx.ring.jwks(ctx.scenarios.acceptedKids()), { "cache-control": "public, max-age=60" });
  return ctx.ring.ready ? ctx.ring.ready.then(jwks) : jwks();
};

/** GET /__sandbox/health: for readiness probes and the image's HEALTHCHECK; its method was checked by the control plane's router. */
export const healthEndpoint: Endpoint = (_request, ctx) => {
  return jsonResponse(200, { status: "ok", version: ctx.version, scenarios: ctx.scenarios.loaded.map((s) => s.name) });
};
