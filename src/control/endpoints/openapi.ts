import { jsonResponse } from "../../core/context.js";
import type { ControlEndpoint } from "../context.js";

/**
 * GET /__sandbox/openapi.json: the whole surface, merchant API and control plane, as OpenAPI 3.1.
 * The document (~100 KB of literals) is imported on first request, not at start.
 */
export const openApiEndpoint: ControlEndpoint = async (_request, ctx) => {
  const { openApiDocument } = await import("../openapi.js");
  return jsonResponse(200, openApiDocument(ctx.version), { "cache-control": "no-cache" });
};
