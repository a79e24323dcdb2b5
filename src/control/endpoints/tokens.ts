import { jsonResponse } from "../../core/context.js";
import type { ControlEndpoint } from "../context.js";
import { InvalidRequest } from "../../core/errors.js";
import { controlBody, onlyFields } from "../body.js";
import { mintToken, type MintRequest } from "../mint.js";

/** POST /__sandbox/tokens `{merchant?, variant?, ttl?}` → 201 with a token from the catalogue. */
export const tokensEndpoint: ControlEndpoint = async (request, ctx, trace) => {
  const body = controlBody(request, trace.body, "POST /__sandbox/tokens", '{"merchant": "sandbox-api-key", "variant": "expired"}');
  onlyFields(body, ["merchant", "variant", "ttl"], "POST /__sandbox/tokens");
  for (const field of ["merchant", "variant"] as const) {
    if (body[field] !== undefined && typeof body[field] !== "string") {
      throw new InvalidRequest("mint_field_invalid", `"${field}" must be a string.`);
    }
  }
  const minted = await mintToken(ctx, body as MintRequest);
  return jsonResponse(201, minted);
};
