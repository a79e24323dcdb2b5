import { jsonResponse } from "../../core/context.js";
import type { SandboxResponse } from "../../core/http-types.js";
import type { ControlContext } from "../context.js";

/**
 * GET /__sandbox/openapi.json: the whole surface, merchant API and control plane, as OpenAPI 3.1.
 * The document (a large literal) is imported on first request, not at start. The control
 * router passes its route table in (importing it here would make an import circle).
 */
export async function openApiEndpoint(
  ctx: ControlContext,
  controlRoutes: ReadonlyArray<{ path: string; methods: readonly string[] }>,
): Promise<SandboxResponse> {
  const { openApiDocument } = await import("../openapi.js");
  // The primary scenario's profile: the one requests no merchant can be read from are answered in.
  const shaper = ctx.scenarios.primary.shaper;
  const profile = shaper && { name: shaper.profile, shapes: shaper.schemas() };
  return jsonResponse(200, openApiDocument(ctx.version, controlRoutes, profile), { "cache-control": "no-cache" });
}
