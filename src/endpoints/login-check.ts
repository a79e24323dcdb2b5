import type { SandboxSettings } from "../core/config.js";
import { jsonResponse, type Endpoint } from "../core/context.js";
import { Gone, InvalidRequest, LoginRejected } from "../core/errors.js";
import { readJsonObject, type JsonBodyOptions } from "../core/json-body.js";
import { secretMatches } from "../core/merchants.js";

/** The login's JSON body: its form, checked by the pipeline (request-form.ts) before the endpoint reads it. */
export const LOGIN_BODY: JsonBodyOptions = {
  strictContentType: true,
  endpoint: "POST /api/login_check",
  example: '{"username": "<e-mail>", "password": "..."}',
};

/** A gone login answers 410 to every request, whatever its form. */
export const loginGone = (settings: SandboxSettings): boolean => settings.loginMode === "gone";

/**
 * POST /api/login_check, the deprecated e-mail/password login, in the shape of Symfony's
 * json_login with LexikJWTAuthenticationBundle. Every answer, refusals included, carries
 * Deprecation (RFC 9745), Sunset (RFC 8594) and a Link to the successor, so a client that reads
 * headers learns it must move (the router adds `deprecationHeaders` to every answer of this route);
 * in `gone` mode the endpoint answers 410.
 */
export const loginCheckEndpoint: Endpoint = async (request, ctx, trace) => {
  // The mode of the scenario the e-mail belongs to (a rule may have switched it to gone).
  if (loginGone(trace.scenario.settings)) {
    throw new Gone("login_gone", "POST /api/login_check has been removed. Exchange api_key and api_secret at POST /api/v2/auth/token instead.");
  }
  // Its form (method, size, JSON) was checked before, unless it is gone (request-form.ts).
  const body = readJsonObject(request, trace.body, LOGIN_BODY);
  if (!body) {
    throw new InvalidRequest("login_body_missing", 'POST /api/login_check takes a JSON body {"username": "<e-mail>", "password": "..."}.');
  }
  const identifierField = typeof body.username === "string" ? "username" : "email";
  const identifier = body[identifierField];
  if (typeof identifier !== "string" || identifier === "") {
    throw new InvalidRequest("login_username_missing", 'The key "username" (or "email") must be provided as a non-empty string.');
  }
  if (typeof body.password !== "string" || body.password === "") {
    throw new InvalidRequest("login_password_missing", 'The key "password" must be provided as a non-empty string.');
  }
  const merchant = ctx.merchants.byLoginEmail(identifier);
  const ok =
    merchant?.login !== undefined && secretMatches(body.password, merchant.login.password) && !merchant.disabled && !trace.effects.rejectCredentials;
  if (!merchant || !ok) {
    if (merchant) trace.merchantId = merchant.id;
    // Lexik's exact failure body: integrations written against it parse this, not problem+json.
    // A response profile answers it as its other refusals instead.
    const shaped = trace.scenario.shaper?.refusal(
      new LoginRejected(
        "Invalid credentials: the e-mail is unknown, the password wrong, or the merchant disabled. Send a loaded merchant's login, or move to POST /api/v2/auth/token.",
      ),
      trace.shown.path,
      ctx.merchants.secrets.view(),
      undefined,
      trace.facts,
      "login",
    );
    return shaped ?? jsonResponse(401, { code: 401, message: "Invalid credentials." });
  }
  trace.merchantId = merchant.id;
  const scenario = ctx.scenarios.of(merchant);
  const now = scenario.clock.nowSeconds();
  const ttl = scenario.settings.tokenTtlSeconds;
  const issue = trace.effects.issue;
  const issuedAt = issue?.expired ? now - ttl - 1 : now;
  const { token, claims } = await ctx.tokens.issueLoginToken(merchant, {
    issuedAt,
    ttlSeconds: ttl,
    ...(issue?.notBeforeSeconds !== undefined && { notBefore: now + issue.notBeforeSeconds }),
    jti: ctx.newTokenId(),
  });
  // Journaled like an exchange's token: payment and cashout accept it, so the timeline draws it too.
  trace.tokenId = claims.jti;
  trace.tokenExpiresAtMs = claims.exp * 1000;
  return scenario.shaper?.login({ accessToken: token, expiresIn: ttl, issuedAt, scope: "" }, {}, trace.facts) ?? jsonResponse(200, { token });
};

/** The three headers of every answer of the login, from the sandbox's settings (the router formats them once per sandbox). */
export function deprecationHeaders(settings: SandboxSettings): Record<string, string> {
  return {
    deprecation: `@${Math.floor(settings.loginDeprecatedAt.getTime() / 1000)}`,
    sunset: settings.loginSunsetAt.toUTCString(),
    link: '</api/v2/auth/token>; rel="successor-version"',
  };
}
