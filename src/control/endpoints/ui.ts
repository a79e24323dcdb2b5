import { NotFound } from "../../core/errors.js";
import type { SandboxResponse } from "../../core/http-types.js";
import { echo } from "../../core/echo.js";
import type { ControlContext } from "../context.js";
import { UiAssets } from "../ui-assets.js";

/** Where `GET /` sends a browser when the control plane is on. */
export const UI_PATH = "/__sandbox/ui/";

/**
 * The page may load only its own script and style and talk only to this sandbox: no inline script,
 * no other origin, no framing (so another site cannot overlay it to steer clicks).
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // The files change only with the package; revalidating is cheap and never serves a stale page after an upgrade.
  "cache-control": "no-cache",
};

/** GET /__sandbox/ui/ (the page) and /__sandbox/ui/{asset} (its script and style). */
export function uiEndpoint(ctx: ControlContext, asset: string): SandboxResponse {
  const file = ctx.ui.get(asset === "" ? "index.html" : asset);
  if (!file) {
    throw new NotFound(`The QA page has no file '${echo(asset, 60)}': it serves ${UiAssets.names().join(", ")}. Open ${UI_PATH} in a browser.`);
  }
  return { status: 200, headers: { "content-type": file.contentType, ...PAGE_HEADERS }, body: file.body };
}

/**
 * `/` as the app's router serves it when the control plane is on (app/routes.ts): GET and HEAD
 * redirect to the page; any other method is an unknown path of the merchant API (404 `not_found`,
 * in a response profile's shape). The router and the OpenAPI document both read this row, so `/`
 * cannot answer undocumented.
 */
export const ROOT_ROUTE = { path: "/", name: "unknown", methods: ["GET", "HEAD"] } as const;

/** GET / with the control plane on: a browser opening the sandbox's address lands on the page. */
export function rootRedirect(): SandboxResponse {
  return {
    status: 302,
    headers: { location: UI_PATH, "cache-control": "no-cache", "content-type": "text/plain; charset=utf-8" },
    body: `See ${UI_PATH}\n`,
  };
}
