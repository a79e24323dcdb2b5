import { printable } from "../../core/printable.js";
import { API_PATHS, type ApiPaths } from "../../endpoints/api-paths.js";
import type { JournalEntry } from "../journal.js";
import { perRequest, plural, subject, type Check } from "./common.js";

/** The distinct wrong paths a wrong_base_path message names; the rest are counted, and all are evidence. */
export const WRONG_PATHS_LISTED = 5;
/** A wrong path is cut to this many characters in the message (the evidence has the whole request). */
const PATH_SHOWN = 120;

/**
 * Requests to paths the API does not serve (endpoint `unknown`): nearly always a base URL with a
 * path of its own (`…/api/v2` with the client adding `/api/v2/…` again, `…/api/v1`, a missing
 * `/api`). Each wrong path is named with the API path it most likely meant, the same guess the 404
 * answer made. Under a session's base URL every such request is its client's; at the root, a request
 * that named no merchant counts only when its path was clearly meant for the API (it has a
 * correction), so a browser's `GET /` or `/favicon.ico` does not fail the unfiltered report's gate.
 * `api`: the paths and corrections of a route table (the sandbox's own in `wrongBasePath`).
 */
export function wrongBasePathOf(api: ApiPaths): Check {
  return perRequest(
    "wrong_base_path",
    "error",
    (e) => e.endpoint === "unknown" && (e.viaSessionUrl === true || e.merchant !== undefined || api.correct(e.path) !== undefined),
    (m, hits) => {
      const paths = distinctPaths(api, hits);
      const listed = paths.slice(0, WRONG_PATHS_LISTED).map(describe);
      const more = paths.length > WRONG_PATHS_LISTED ? `, and ${plural(paths.length - WRONG_PATHS_LISTED, "other path")}` : "";
      const unmatched = paths.some((p) => p.corrected === undefined) ? ` The API serves: ${api.routes.join(", ")}.` : "";
      return `${subject(m)} called ${plural(paths.length, "path")} the API does not serve (${plural(hits.length, "request")}): ${listed.join("; ")}${more}.${unmatched} Configure the integration's base URL as the session's base_url (without a session: the sandbox's root URL), with no path of its own: the integration appends /api/v2/... to it.`;
    },
  );
}

export const wrongBasePath: Check = wrongBasePathOf(API_PATHS);

interface WrongPath {
  method: string;
  path: string;
  requests: number;
  corrected: string | undefined;
}

/** Each method and path once, in order of first use, with the path it meant. */
function distinctPaths(api: ApiPaths, hits: readonly JournalEntry[]): WrongPath[] {
  const byRequest = new Map<string, WrongPath>();
  for (const e of hits) {
    const key = `${e.method} ${e.path}`;
    const known = byRequest.get(key);
    if (known) known.requests++;
    else byRequest.set(key, { method: e.method, path: e.path, requests: 1, corrected: api.correct(e.path) });
  }
  return [...byRequest.values()];
}

function describe(p: WrongPath): string {
  const shown = p.path.length > PATH_SHOWN ? `${printable(p.path, PATH_SHOWN)}...` : printable(p.path, PATH_SHOWN);
  const times = p.requests > 1 ? ` (${p.requests} times)` : "";
  const fix = p.corrected === undefined ? "no API path matches it" : `use ${printable(p.corrected, PATH_SHOWN)}`;
  return `${printable(p.method, 20)} ${shown}${times}: ${fix}`;
}
