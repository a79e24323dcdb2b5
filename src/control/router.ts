import { bearerTokenOf } from "../core/bearer.js";
import { AdminTokenRequired, MethodNotAllowed, NotFound } from "../core/errors.js";
import { headerValue, type SandboxRequest } from "../core/http-types.js";
import { secretMatches } from "../core/merchants.js";
import { assertFromThisSite, assertHostAllowed, assertJsonDeclared } from "./access.js";
import type { ControlContext, ControlEndpoint, ControlHandler } from "./context.js";
import { healthEndpoint } from "../endpoints/discovery.js";
import { notFoundEndpoint } from "../endpoints/not-found.js";
import { moveClock, resetEndpoint, showClock } from "./endpoints/clock-and-reset.js";
import { eventsEndpoint } from "./endpoints/events.js";
import { openApiEndpoint } from "./endpoints/openapi.js";
import { reportEndpoint, reportOnSession, requestsEndpoint } from "./endpoints/journal.js";
import { scanEndpoint } from "./endpoints/scan.js";
import { scenariosEndpoint } from "./endpoints/scenarios.js";
import { applySessionActions } from "./endpoints/session-actions.js";
import { moveSessionClock, resetSession, showSessionClock } from "./endpoints/session-clock-and-reset.js";
import { createSession, endSession, listSessions, showSession } from "./endpoints/sessions.js";
import { tokensEndpoint } from "./endpoints/tokens.js";
import { rootRedirect, uiEndpoint } from "./endpoints/ui.js";

/**
 * The control plane under /__sandbox/: one table of routes, checked in order, each method of a
 * route pointing at its handler. Every route that takes GET takes HEAD too (the pipeline hands a
 * HEAD over as GET), and a 405's Allow lists both. Health is always open, to any Host and
 * Origin (probes and load balancers send what they like, and it tells nothing but "up"); the QA
 * page's files check only the Host (they hold nothing of any session; the page then asks for the
 * admin token and sends it on every operation); everything else refuses web pages (access.ts),
 * needs the admin token when one is set, and is absent (404) with --no-control-plane.
 */
type RouteAccess = "open" | "page" | "admin";

type Method = "GET" | "POST" | "DELETE";

interface ControlRoute {
  /** The path as the OpenAPI document writes it; `{id}` is one path segment, passed to the handler. */
  path: string;
  pattern: RegExp;
  /** The methods the route answers, as a 405's Allow and the OpenAPI document list them. */
  methods: string[];
  /** By method; a Map, so that no method name reaches an object's prototype. */
  handlers: ReadonlyMap<string, ControlHandler>;
  access: RouteAccess;
}

/** A route's pattern, made from its documented path so the two cannot disagree; `{name}` is one path segment. */
function controlRoute(path: string, handlers: Partial<Record<Method, ControlHandler>>, access: RouteAccess = "admin"): ControlRoute {
  const source = path.replace(/[.]/g, "\\.").replace(/\{[a-z]+\}/g, "([^/]+)");
  const methods = Object.keys(handlers).flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m]));
  return { path, pattern: new RegExp(`^${source}$`), methods, handlers: new Map(Object.entries(handlers)), access };
}

const ROUTES: ControlRoute[] = [
  controlRoute("/__sandbox/health", { GET: (r, c, t) => healthEndpoint(r, c, t) }, "open"),
  // Without the slash the page's relative links (app.js) would resolve under /__sandbox/.
  controlRoute("/__sandbox/ui", { GET: () => rootRedirect() }, "page"),
  controlRoute("/__sandbox/ui/", { GET: (_r, c) => uiEndpoint(c, "") }, "page"),
  controlRoute("/__sandbox/ui/{asset}", { GET: (_r, c, _t, p) => uiEndpoint(c, p[0]!) }, "page"),
  controlRoute("/__sandbox/openapi.json", { GET: (_r, c) => openApiEndpoint(c, controlRouteTable()) }),
  controlRoute("/__sandbox/scenarios", { GET: scenariosEndpoint }),
  controlRoute("/__sandbox/sessions", { GET: listSessions, POST: createSession }),
  controlRoute("/__sandbox/sessions/{id}", { GET: showSession, DELETE: endSession }),
  controlRoute("/__sandbox/sessions/{id}/clock", { GET: showSessionClock, POST: moveSessionClock }),
  controlRoute("/__sandbox/sessions/{id}/reset", { POST: resetSession }),
  controlRoute("/__sandbox/sessions/{id}/actions", { POST: applySessionActions }),
  controlRoute("/__sandbox/sessions/{id}/report", { GET: reportOnSession }),
  controlRoute("/__sandbox/clock", { GET: showClock, POST: moveClock }),
  controlRoute("/__sandbox/reset", { POST: resetEndpoint }),
  controlRoute("/__sandbox/requests", { GET: requestsEndpoint }),
  controlRoute("/__sandbox/report", { GET: reportEndpoint }),
  // A HEAD gets GET's headers; the pipeline cancels the stream it would have opened.
  controlRoute("/__sandbox/events", { GET: eventsEndpoint }),
  controlRoute("/__sandbox/tokens", { POST: tokensEndpoint }),
  controlRoute("/__sandbox/scan", { POST: scanEndpoint }),
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
    const handler = route.handlers.get(request.method);
    if (!handler) throw new MethodNotAllowed(request.method, trace.shown.path, route.methods);
    if (route.access === "admin") assertJsonDeclared(request, trace.shown.path);
    // A HEAD arrives here as GET (the pipeline's asGet): the handler answers as for GET, and the
    // server sends that answer's status and headers, content-length included, and no body.
    return handler(request, ctx, trace, m.slice(1).map(decodeURIComponentSafe));
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
