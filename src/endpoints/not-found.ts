import type { Endpoint } from "../core/context.js";
import { NotFound } from "../core/errors.js";
import { printable } from "../core/printable.js";
import { API_PATHS, type ApiPaths } from "./api-paths.js";

/**
 * Anything else: 404 that lists what the sandbox does serve (the merchant API of `api`, and the
 * control plane's always-open health check, joined once), with a hint for near misses.
 */
export function notFoundOf(api: ApiPaths): Endpoint {
  const known = [...api.routes, "GET /__sandbox/health"].join(", ");
  return (request, _ctx, trace) => {
    const hint = nearMiss(api, trace.shown.path);
    throw new NotFound(`No endpoint at ${request.method} ${printablePath(trace.shown.path)}.${hint} This sandbox serves: ${known}.`);
  };
}

/** The sandbox's 404, of its own route table. */
export const notFoundEndpoint: Endpoint = notFoundOf(API_PATHS);

/** The hint for the path the client most likely meant (the report's wrong_base_path names the same). */
function nearMiss(api: ApiPaths, shownPath: string): string {
  const corrected = api.correct(shownPath);
  const lower = shownPath.toLowerCase().replace(/\/+$/, "");
  if (corrected !== undefined && corrected === lower) return ` Did you mean ${corrected} (exact case, no trailing slash)?`;
  if (/^\/api\/v[013-9]\//.test(lower)) {
    const meant = corrected === undefined ? "" : ` Did you mean ${printablePath(corrected)}?`;
    return ` This sandbox simulates version 2 of the API: use the /api/v2/ prefix.${meant}`;
  }
  return corrected === undefined ? "" : ` Did you mean ${printablePath(corrected)}?`;
}

function printablePath(shown: string): string {
  return shown.length > 200 ? `${printable(shown, 200)}...` : printable(shown, 200);
}
