import { jsonResponse } from "../../core/context.js";
import type { SandboxResponse } from "../../core/http-types.js";
import type { ControlContext } from "../context.js";

/**
 * GET /__sandbox/openapi.json: the whole surface, merchant API and control plane, as OpenAPI 3.1.
 * The document (~100 KB of literals) is imported on first request, not at start. The control
 * router passes its route table in (importing it here would make an import circle).
 */
export async function openApiEndpoint(
  ctx: ControlContext,
  controlRoutes: ReadonlyArray<{ path: string; methods: readonly string[] }>,
): Promise<SandboxResponse> {
  const { openApiDocument } = await import("../openapi.js");
  return jsonResponse(200, openApiDocument(ctx.version, controlRoutes), { "cache-control": "no-cache" });
}
