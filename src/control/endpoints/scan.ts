import { jsonResponse } from "../../core/context.js";
import type { ControlEndpoint } from "../context.js";
import { InvalidRequest } from "../../core/errors.js";
import { assertBodySize } from "../../core/json-body.js";
import { controlBody, onlyFields } from "../body.js";
import { scanText } from "../scan.js";

/**
 * POST /__sandbox/scan `{"text": "<log text>"}` → 200 `{"hits": [{line, column, kind, merchant}],
 * "unverified": [{line, column, length}]}`: where the text holds a secret of this sandbox in clear
 * (a merchant's api_secret, payment token or password, of a live or ended session, or a JWT a key
 * of this sandbox signed), and where a JWT-shaped string stands that no key it knows verifies (one
 * signed before a restart, or by another issuer). The answer says where and what, never the secret. The
 * body is bounded by the body size limit (64 KiB by default): send a large log in chunks of lines.
 */
export const scanEndpoint: ControlEndpoint = async (request, ctx, trace) => {
  assertBodySize(request, ctx.settings.maxBodyBytes);
  const body = controlBody(request, trace.body, "POST /__sandbox/scan", '{"text": "<the log lines to scan>"}');
  onlyFields(body, ["text"], "POST /__sandbox/scan");
  if (typeof body.text !== "string") {
    throw new InvalidRequest(
      body.text === undefined ? "scan_text_missing" : "scan_text_invalid",
      `POST /__sandbox/scan takes {"text": "<log text>"}: "text" must be a string (the lines to scan, joined with \\n).`,
    );
  }
  // A JWT in the text is ours if one of our keys verifies it: every key must be in.
  if (ctx.ring.ready) await ctx.ring.ready;
  const clientClaims = new Set(["client_id", ...ctx.scenarios.all.flatMap((s) => s.tokenFormat.clientClaim ?? [])]);
  const result = await scanText(body.text, ctx.merchants.fingerprints, {
    findKey: (kid) => ctx.ring.verifier(kid),
    kidless: (token) => ctx.tokens.provenSubject(token),
    clientClaims: [...clientClaims],
  });
  return jsonResponse(200, result);
};
