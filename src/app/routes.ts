import { refusalGroupOf, type RefusalGroup } from "../core/answer-shaper.js";
import type { SandboxSettings } from "../core/config.js";
import type { Endpoint, EndpointName } from "../core/context.js";
import { NotFound } from "../core/errors.js";
import { controlEndpoint } from "../control/router.js";
import { apiPaths } from "../endpoints/api-paths.js";
import { notFoundEndpoint, notFoundOf } from "../endpoints/not-found.js";
import { ROOT_ROUTE, rootRedirect } from "../control/endpoints/ui.js";
import { MERCHANT_ROUTE_TABLE, type MerchantRoute } from "../endpoints/merchant-routes.js";
import type { RequestForm } from "../endpoints/request-form.js";
import { printable } from "../core/printable.js";
import type { SandboxContext } from "./context.js";

/**
 * Routing by exact path first, then by group prefix: one map lookup or two string tests per
 * request, before anything is parsed.
 */
export interface Route {
  name: EndpointName;
  /** Merchant API endpoints take a narrower context than the whole sandbox; the control plane takes it all. */
  endpoint: Endpoint<SandboxContext>;
  /** Headers every answer of this route carries, refusals included (the deprecated login's). */
  headers?: Record<string, string>;
  /** The form a request must have (a merchant API route's), checked before identity and rules. */
  form?: RequestForm;
  /** The group a response profile's refusals on this route belong to (none: the 404, the control plane). */
  refusalGroup?: RefusalGroup;
}

/** Everything under /__sandbox/ is the control plane (health included), routed by its own table. */
const CONTROL: Route = { name: "control", endpoint: controlEndpoint };

const NOT_FOUND: Route = { name: "unknown", endpoint: notFoundEndpoint };

/** What a request refused before routing (a path with dot segments) is journaled as: no endpoint of the API. */
export const UNROUTED: Route = NOT_FOUND;

/**
 * `/` with the control plane on: a browser opening the sandbox's address is sent to the QA page.
 * Still an unknown path of the merchant API (journaled as before); any other method gets its 404.
 */
const ROOT: Route = {
  name: ROOT_ROUTE.name,
  // A HEAD arrives as GET (the pipeline's asGet).
  endpoint: (request, ctx, trace) =>
    (ROOT_ROUTE.methods as readonly string[]).includes(request.method) ? rootRedirect() : notFoundEndpoint(request, ctx, trace),
};

/**
 * Under a session's base URL only the merchant API is served: the control plane is the test
 * harness's, at the root, and never the integration's. Answered like any unknown path there.
 */
const CONTROL_UNDER_BASE: Route = {
  name: "unknown",
  endpoint: (request, _ctx, trace) => {
    throw new NotFound(
      `The control plane is not served under a session's base URL: call ${request.method} ${printable(trace.shown.path, 200)} at the root of the sandbox, without /s/{session_id}.`,
    );
  },
};

/** The route of a path under a session's base URL (`/s/{id}/...`): the root's, but the control plane's. */
export function underBase(route: Route): Route {
  if (route === ROOT) return NOT_FOUND;
  return route.name === "control" ? CONTROL_UNDER_BASE : route;
}

/**
 * The router of one sandbox, built when it starts: the login's headers come from the sandbox's
 * settings, so they are formatted here once rather than per request (or cached in the module).
 * `table`: the merchant routes (another than the sandbox's only in a test), whose 404 lists them.
 */
export function createRouter(
  settings: SandboxSettings,
  controlPlane: boolean,
  table: readonly MerchantRoute[] = MERCHANT_ROUTE_TABLE,
): (path: string) => Route {
  const exact = new Map<string, Route>();
  if (controlPlane) exact.set(ROOT_ROUTE.path, ROOT);
  const notFound: Route = { name: "unknown", endpoint: notFoundOf(apiPaths(table)) };
  const groups: Array<{ prefix: string; route: Route }> = [];
  for (const row of table) {
    const { path, name, endpoint, groupPrefix, headers } = row;
    const refusalGroup = refusalGroupOf(name);
    const route: Route = {
      name,
      endpoint,
      form: formOf(row),
      ...(headers && { headers: headers(settings) }),
      ...(refusalGroup && { refusalGroup }),
    };
    if (groupPrefix) groups.push({ prefix: groupPrefix, route });
    else exact.set(path, route);
  }
  return (path) => {
    const found = exact.get(path);
    if (found) return found;
    if (path.startsWith("/__sandbox/")) return CONTROL;
    for (const group of groups) {
      if (path === group.prefix || path.startsWith(group.prefix + "/")) return group.route;
    }
    return notFound;
  };
}

/** The form check of a merchant route: a protected group's 405 names the path sent, any other its own path. */
function formOf({ methods, path, groupPrefix, json, credentials, formless }: MerchantRoute): RequestForm {
  return { methods, ...(!groupPrefix && { path }), ...(json && { json }), ...(credentials && { credentials }), ...(formless && { formless }) };
}
