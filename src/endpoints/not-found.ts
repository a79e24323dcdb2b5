import type { Endpoint } from "../core/context.js";
import { NotFound } from "../core/errors.js";
import { printable } from "../core/printable.js";
import { API_ROUTES, correctApiPath } from "./api-paths.js";

/** What the 404 lists: the merchant API and the control plane's always-open health check (joined once). */
const KNOWN_ROUTES = [...API_ROUTES, "GET /__sandbox/health"].join(", ");

/** Anything else: 404 that lists what the sandbox does serve, with a hint for near misses. */
export const notFoundEndpoint: Endpoint = (request, _ctx, trace) => {
  const hint = nearMiss(trace.shown.path);
  throw new NotFound(`No endpoint at ${request.method} ${printablePath(trace.shown.path)}.${hint} This sandbox serves: ${KNOWN_ROUTES}.`);
};

/** The hint for the path the client most likely meant (the report's wrong_base_path names the same). */
function nearMiss(shownPath: string): string {
  const corrected = correctApiPath(shownPath);
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
