import { jsonResponse, type Endpoint, type EndpointContext } from "../core/context.js";
import { redact } from "../core/redact.js";
import { extractCredentials } from "../core/credentials.js";
import { InvalidClient } from "../core/errors.js";
import { readJsonObject, type JsonBodyOptions } from "../core/json-body.js";
import { secretMatches } from "../core/merchants.js";
import { requireSessionMerchant } from "../core/session-binding.js";

/** The exchange's JSON body: its form, checked by the pipeline (request-form.ts) before the endpoint reads it. */
export const TOKEN_BODY: JsonBodyOptions = {
  strictContentType: true,
  endpoint: "POST /api/v2/auth/token",
  example: '{"api_key": "...", "api_secret": "..."}',
};

/**
 * POST /api/v2/auth/token: api_key + api_secret (body and/or headers) for an access token.
 * Its form (method, size, JSON, each credential one way) was checked before (request-form.ts);
 * then straight line: credentials, merchant, secret, state, token.
 */
export const tokenEndpoint: Endpoint = async (request, ctx, trace) => {
  const body = readJsonObject(request, trace.body, TOKEN_BODY);
  // The precedence of the scenario the request was attributed to (by either copy of the api_key).
  const credentials = extractCredentials(request, body, trace.scenario.settings.credentialPrecedence);

  trace.credentialSources = credentials.sources;
  const merchant = ctx.merchants.byKey(credentials.apiKey);
  if (!merchant) {
    throw new InvalidClient(
      "unknown_api_key",
      `The api_key ${redact(credentials.apiKey)} is not known to this sandbox. Use the api_key of a loaded merchant (${knownKeys(ctx)}), and check that api_key and api_secret are not swapped.`,
    );
  }
  requireSessionMerchant(trace, merchant, ctx.scenarios);
  trace.merchantId = merchant.id;
  const scenario = ctx.scenarios.of(merchant);
  if (trace.effects.rejectCredentials) {
    throw new InvalidClient(
      "credentials_rejected",
      `The credentials of api_key '${merchant.apiKey}' were rejected (scenario '${scenario.name}' simulates this). Your integration should report it and not retry in a loop.`,
    );
  }
  if (!secretMatches(credentials.apiSecret, merchant.apiSecret)) {
    throw new InvalidClient(
      "wrong_api_secret",
      `The api_secret does not match the api_key '${merchant.apiKey}'. Check that the secret belongs to this key and was not rotated.`,
    );
  }
  if (merchant.disabled) {
    throw new InvalidClient(
      "merchant_disabled",
      `The merchant of api_key '${merchant.apiKey}' is disabled, so it cannot get tokens. Use an active merchant's credentials.`,
      scenario.settings.disabledMerchantStatus,
    );
  }

  const ttl = scenario.settings.tokenTtlSeconds;
  const now = scenario.clock.nowSeconds();
  const issue = trace.effects.issue;
  const { token, claims } = await ctx.tokens.issue(merchant, {
    // A scenario may hand out a token that is already expired, or not valid yet.
    issuedAt: issue?.expired ? now - ttl - 1 : now,
    ttlSeconds: ttl,
    jti: ctx.newTokenId(),
    ...(issue?.notBeforeSeconds !== undefined && { notBefore: now + issue.notBeforeSeconds }),
  });
  trace.tokenId = claims.jti;
  trace.tokenExpiresAtMs = claims.exp * 1000;
  // RFC 6749 §5.1: token responses must not be cached.
  const headers = { pragma: "no-cache" };
  // The scenario's response profile may shape the answer (none for oauth: this answer as it is).
  return (
    scenario.shaper?.token({ accessToken: token, expiresIn: ttl, issuedAt: claims.iat, scope: merchant.scopes.join(" ") }, headers, trace.facts) ??
    jsonResponse(200, { access_token: token, token_type: "Bearer", expires_in: ttl }, headers)
  );
};

/**
 * The loaded merchants' api_keys are public, so naming them helps; the unknown value itself is shown
 * only redacted, since integrations that swap the fields send their secret as the api_key.
 */
function knownKeys(ctx: EndpointContext): string {
  // Only the scenarios loaded at start: a session's api_key is no one else's business.
  const keys = ctx.scenarios.loaded.flatMap((s) => s.merchants.map((m) => `'${m.apiKey}'`));
  return keys.length <= 5 ? `loaded: ${keys.join(", ")}` : `${keys.length} are loaded, e.g. ${keys.slice(0, 3).join(", ")}`;
}
