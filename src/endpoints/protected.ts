import type { VerifiedAccessToken } from "../core/access-tokens.js";
import { isoOfSeconds } from "../core/clock.js";
import { jsonResponse, type Endpoint } from "../core/context.js";
import type { Scope } from "../core/config.js";
import { InsufficientScope, InvalidToken, LoginTokenRefused } from "../core/errors.js";
import { assertNoTokenInQuery, readBearerToken } from "../core/bearer.js";
import { deprecationHeaders } from "./login-check.js";

/**
 * `/api/v2/payment/*` and `/api/v2/cashout/*` (the methods of the route table, which the OpenAPI
 * document lists; any other, TRACE or CONNECT say, is refused 405 by the form check before
 * credentials count, request-form.ts):
 * the access token (or, unless the `loginToken` setting refuses it, the deprecated login's token)
 * as an RFC 6750 bearer token, then the group's scope. Business behaviour is not specified, so a
 * valid call gets an honest placeholder that says which merchant did which operation.
 */
export function protectedEndpoint(scope: Scope): Endpoint {
  return async (request, ctx, trace) => {
    assertNoTokenInQuery(request);
    const token = readBearerToken(request, {
      tokenName: "access token",
      howToGet: "get one from POST /api/v2/auth/token",
    });
    if (trace.effects.rejectCredentials) {
      throw new InvalidToken(
        "credentials_rejected",
        `The access token was rejected (scenario '${trace.scenario.name}' simulates this). A client must handle a 401 by getting a new token from POST /api/v2/auth/token.`,
      );
    }
    let verified: VerifiedAccessToken;
    try {
      verified = await ctx.tokens.verify(token);
    } catch (e) {
      if (e instanceof LoginTokenRefused) trace.loginToken = "refused";
      throw e;
    }
    trace.merchantId = verified.merchant.id;
    trace.tokenId = verified.claims.jti;
    if (verified.loginToken) trace.loginToken = "accepted";
    if (!verified.scopes.has(scope)) {
      throw new InsufficientScope(
        scope,
        `The access token of merchant '${verified.merchant.id}' has no '${scope}' scope (it has: ${[...verified.scopes].join(", ") || "none"}). This merchant is not allowed to use /api/v2/${scope}/ endpoints; ask for the '${scope}' right or use a merchant that has it.`,
      );
    }
    const operation = `${request.method} ${trace.shown.path}`;
    const answer = {
      sandbox: true,
      merchant_id: verified.merchant.id,
      operation,
      scope,
      token_id: verified.claims.jti,
      expires_at: isoOfSeconds(verified.claims.exp),
      note: "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.",
    };
    const response = trace.scenario.shaper?.protectedCall(answer, operation, trace.facts) ?? jsonResponse(200, answer);
    // Authorised by the login's token: answered as the login answers, saying it will be switched off.
    return verified.loginToken ? { ...response, headers: { ...response.headers, ...deprecationHeaders(ctx.settings) } } : response;
  };
}
