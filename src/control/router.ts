import { bearerTokenOf } from "../core/bearer.js";
import type { RequestTrace } from "../core/context.js";
import { AdminTokenRequired, MethodNotAllowed, NotFound } from "../core/errors.js";
import { headerValue, type SandboxRequest } from "../core/http-types.js";
import { secretMatches } from "../core/merchants.js";
import { assertFromThisSite, assertHostAllowed, assertJsonDeclared } from "./access.js";
import type { ControlContext, ControlEndpoint } from "./context.js";
import { healthEndpoint } from "../endpoints/discovery.js";
import { notFoundEndpoint } from "../endpoints/not-found.js";
import { clockEndpoint, resetEndpoint } from "./endpoints/clock-and-reset.js";
import { eventsEndpoint } from "./endpoints/events.js";
import { openApiEndpoint } from "./endpoints/openapi.js";
import { reportEndpoint, requestsEndpoint } from "./endpoints/journal.js";
import { scanEndpoint } from "./endpoints/scan.js";
import { scenariosEndpoint } from "./endpoints/scenarios.js";
import { sessionEndpoint, sessionsEndpoint } from "./endpoints/sessions.js";
import { tokensEndpoint } from "./endpoints/tokens.js";
import { rootRedirect, uiEndpoint } from "./endpoints/ui.js";

/**
 * The control plane under /__sandbox/: one table of routes, checked in order. Every route that
 * takes GET takes HEAD too, and a 405's Allow lists both. Health is always open, to any Host and
 * Origin (probes and load balancers send what they like, and it tells nothing but "up"); the QA
 * page's files check only the Host (they hold nothing of any session; the page then asks for the
 * admin token and sends it on every operation); everything else refuses web pages (access.ts),
 * needs the admin token when one is set, and is absent (404) with --no-control-plane.
 */
type RouteAccess = "open" | "page" | "admin";

interface ControlRoute {
  /** The path as the OpenAPI document writes it; `{id}` is one path segment, passed to the handler. */
  path: string;
  pattern: RegExp;
  methods: string[];
  access: RouteAccess;
  handler: (request: SandboxRequest, ctx: ControlContext, trace: RequestTrace, params: string[]) => ReturnType<ControlEndpoint>;
}

/** A route's pattern, made from its documented path so the two cannot disagree; `{name}` is one path segment. */
function controlRoute(path: string, methods: string[], handler: ControlRoute["handler"], access: RouteAccess = "admin"): ControlRoute {
  const source = path.replace(/[.]/g, "\\.").replace(/\{[a-z]+\}/g, "([^/]+)");
  return { path, pattern: new RegExp(`^${source}$`), methods, access, handler };
}

const ROUTES: ControlRoute[] = [
  controlRoute("/__sandbox/health", ["GET", "HEAD"], (r, c, t) => healthEndpoint(r, c, t), "open"),
  // Without the slash the page's relative links (app.js) would resolve under /__sandbox/.
  controlRoute("/__sandbox/ui", ["GET", "HEAD"], () => rootRedirect(), "page"),
  controlRoute("/__sandbox/ui/", ["GET", "HEAD"], (_r, c) => uiEndpoint(c, ""), "page"),
  controlRoute("/__sandbox/ui/{asset}", ["GET", "HEAD"], (_r, c, _t, p) => uiEndpoint(c, p[0]!), "page"),
  controlRoute("/__sandbox/openapi.json", ["GET", "HEAD"], (_r, c) => openApiEndpoint(c, controlRouteTable())),
  controlRoute("/__sandbox/scenarios", ["GET", "HEAD"], scenariosEndpoint),
  controlRoute("/__sandbox/sessions", ["GET", "HEAD", "POST"], sessionsEndpoint),
  controlRoute("/__sandbox/sessions/{id}", ["GET", "HEAD", "DELETE"], (r, c, t, p) => sessionEndpoint(r, c, t, p, "")),
  controlRoute("/__sandbox/sessions/{id}/clock", ["GET", "HEAD", "POST"], (r, c, t, p) => sessionEndpoint(r, c, t, p, "clock")),
  controlRoute("/__sandbox/sessions/{id}/reset", ["POST"], (r, c, t, p) => sessionEndpoint(r, c, t, p, "reset")),
  controlRoute("/__sandbox/sessions/{id}/actions", ["POST"], (r, c, t, p) => sessionEndpoint(r, c, t, p, "actions")),
  controlRoute("/__sandbox/sessions/{id}/report", ["GET", "HEAD"], (r, c, t, p) => sessionEndpoint(r, c, t, p, "report")),
  controlRoute("/__sandbox/clock", ["GET", "HEAD", "POST"], clockEndpoint),
  controlRoute("/__sandbox/reset", ["POST"], resetEndpoint),
  controlRoute("/__sandbox/requests", ["GET", "HEAD"], requestsEndpoint),
  controlRoute("/__sandbox/report", ["GET", "HEAD"], reportEndpoint),
  // A HEAD gets GET's headers; the pipeline cancels the stream it would have opened.
  controlRoute("/__sandbox/events", ["GET", "HEAD"], eventsEndpoint),
  controlRoute("/__sandbox/tokens", ["POST"], tokensEndpoint),
  controlRoute("/__sandbox/scan", ["POST"], scanEndpoint),
];

/** Every control-plane path and the methods it answers: what the OpenAPI document must list. */
export function controlRouteTable(): Array<{ path: string; methods: readonly string[] }> {
  return ROUTES.map(({ path, methods }) => ({ path, methods }));
}

export const controlEndpoint: ControlEndpoint = (request, ctx, trace) => {
  for (const route of ROUTES) {
    const m = route.pattern.exec(request.path);
    if (!m) continue;
    if (route.access !== "open" && !ctx.control.enabled) break;
    if (route.access === "page") assertHostAllowed(request, ctx.control.allowedHosts);
    if (route.access === "admin") {
      assertFromThisSite(request, ctx.control.allowedHosts);
      assertAdmin(request, ctx);
    }
    if (!route.methods.includes(request.method)) {
      throw new MethodNotAllowed(request.method, trace.shown.path, route.methods);
    }
    if (route.access === "admin") assertJsonDeclared(request, trace.shown.path);
    // A HEAD arrives here as GET (the pipeline's asGet): the handler answers as for GET, and the
    // server sends that answer's status and headers, content-length included, and no body.
    return route.handler(request, ctx, trace, m.slice(1).map(decodeURIComponentSafe));
  }
  // An unknown path gets the same 404 as anywhere else (with its near-miss hints).
  if (ctx.control.enabled) return notFoundEndpoint(request, ctx, trace);
  throw new NotFound("The control plane is turned off (--no-control-plane); only GET /__sandbox/health answers.");
};

/** With --admin-token, the control plane wants `Authorization: Bearer <token>` or `X-Admin-Token`. */
function assertAdmin(request: SandboxRequest, ctx: ControlContext): void {
  const expected = ctx.control.adminToken;
  if (expected === undefined) return;
  const presented = headerValue(request, "x-admin-token") ?? bearerTokenOf(request);
  if (presented && secretMatches(presented, expected)) return;
  throw new AdminTokenRequired(
    presented
      ? "The admin token is wrong. Send the token the sandbox was started with (--admin-token / MERCHANT_SANDBOX_ADMIN_TOKEN)."
      : "This sandbox's control plane needs the admin token: send 'Authorization: Bearer <admin token>' or 'X-Admin-Token: <admin token>'.",
    Boolean(presented),
  );
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
