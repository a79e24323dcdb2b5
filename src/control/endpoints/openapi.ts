import { jsonResponse, type Endpoint } from "../../core/context.js";
import { openApiDocument } from "../openapi.js";

/** GET /__sandbox/openapi.json: the whole surface, merchant API and control plane, as OpenAPI 3.1. */
export const openApiEndpoint: Endpoint = (_request, ctx) => jsonResponse(200, openApiDocument(ctx.version), { "cache-control": "no-cache" });
