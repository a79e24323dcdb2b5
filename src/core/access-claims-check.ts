import { SEND_UNCHANGED } from "./token-text.js";
import type { JWTPayload, ProtectedHeaderParameters } from "jose";
import { isoOfSeconds } from "./clock.js";
import type { SandboxSettings } from "./config.js";
import { echo } from "./echo.js";
import { InvalidToken, LoginTokenRefused } from "./errors.js";
import type { Merchant } from "./merchants.js";
import type { AccessClaims } from "./token-claims.js";
import { isLoginToken, LOGIN_TOKEN_TYP, type TokenFormat, writesSub } from "./token-format.js";
import type { TokenLedger } from "./token-ledger.js";
import { RENEW_HINT, unknownKid, unknownMerchant } from "./token-refusals.js";
import type { MerchantScope, VerifiedAccessToken } from "./token-scope.js";

/**
 * The claims of a token whose signature verified (or, for a token of an ended session's key or a
 * kid-less token naming no merchant, that were read without trusting them): what the token is,
 * whose it is, then time on its owner's scenario clock, early expiry, disabled merchant, revocation.
 */

/** What the claims check reads of the token service. */
export interface ClaimsJudge {
  /** Sandbox-wide settings: for tokens that name no merchant of a scenario. */
  readonly settings: SandboxSettings;
  /** The sandbox's own profile's format: for tokens that name no merchant of a scenario. */
  readonly format: TokenFormat;
  readonly ledger: TokenLedger;
  merchantOf(payload: JWTPayload): Merchant | undefined;
  scopeOf(merchant: Merchant): MerchantScope;
}

/**
 * @param kid The key that verified the token (its header's kid, or the key a kid-less token was
 *   verified with): a rotation may have taken it out of the merchant's scenario since.
 */
export function checkAccessClaims(
  judge: ClaimsJudge,
  header: ProtectedHeaderParameters,
  payload: JWTPayload,
  kid: string | undefined,
): VerifiedAccessToken {
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
    throw new InvalidToken("token_malformed", `The token's payload is not a JSON object. ${SEND_UNCHANGED}`);
  }
  // The merchant's scenario says how its tokens are written (which claims, typ, issuer); a token
  // that names none is judged by the sandbox's own format and settings.
  const merchant = judge.merchantOf(payload);
  const owner = merchant && judge.scopeOf(merchant);
  const format = owner?.tokenFormat ?? judge.format;
  const settings = owner?.settings ?? judge.settings;
  for (const [claim, type] of REQUIRED_CLAIMS) {
    if ((claim === "iss" && !format.iss) || (claim === "aud" && !format.aud) || (claim === "sub" && !writesSub(format))) continue;
    const value = payload[claim];
    const present = value !== undefined;
    const valid =
      type === "number"
        ? typeof value === "number" && Number.isFinite(value)
        : typeof value === "string" || (claim === "aud" && Array.isArray(value));
    if (!valid) {
      throw new InvalidToken(
        "token_claims_invalid",
        `The token's '${claim}' claim is missing or invalid (${present ? "invalid" : "missing"}). ${RENEW_HINT}`,
      );
    }
  }
  // Optional, but when present a NumericDate: a string or null nbf used to be ignored.
  if (payload.nbf !== undefined && !(typeof payload.nbf === "number" && Number.isFinite(payload.nbf))) {
    throw new InvalidToken(
      "token_claims_invalid",
      `The token's 'nbf' claim is invalid: it must be a number of seconds since 1970 (RFC 7519 NumericDate), not ${kindOf(payload.nbf)}. ${RENEW_HINT}`,
    );
  }
  // A profile may give access tokens the login's typ (JWT): then the login's token is the one
  // without client_id, which every access token carries whatever the profile.
  // (A profile without a client claim has another typ: its loader says so.)
  const loginToken =
    header.typ === LOGIN_TOKEN_TYP && (format.typ !== LOGIN_TOKEN_TYP || isLoginToken(header.typ, payload, [format.clientClaim ?? "client_id"]));
  if (loginToken) {
    // Refused here, before any other claim is looked at, exactly as before the setting existed;
    // accepted, it goes through every check an access token goes through.
    if (settings.loginToken === "refused") {
      throw new LoginTokenRefused(
        "This token comes from the deprecated POST /api/login_check; payment and cashout endpoints accept only access tokens. Exchange api_key and api_secret at POST /api/v2/auth/token and send that access_token.",
      );
    }
  } else if (header.typ !== format.typ) {
    throw new InvalidToken(
      "token_not_access_token",
      format.typ === undefined
        ? `The token's type (typ '${echo(String(header.typ), 80)}') is not an access token: this API's access tokens have no typ header. ${RENEW_HINT}`
        : header.typ === undefined
          ? `The token has no type (no typ header); an access token says typ '${format.typ}'. ${RENEW_HINT}`
          : `The token's type (typ '${echo(String(header.typ), 80)}') is not an access token (${format.typ}). ${RENEW_HINT}`,
    );
  }
  if (format.iss && payload.iss !== settings.issuer) {
    throw new InvalidToken(
      "token_wrong_issuer",
      `The token was issued by '${echo(String(payload.iss), 80)}', not by this sandbox ('${settings.issuer}'). ${RENEW_HINT}`,
    );
  }
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (format.aud && !aud.includes(settings.audience)) {
    throw new InvalidToken(
      "token_wrong_audience",
      `The token is meant for audience '${echo(aud.join(","), 80)}', not '${settings.audience}'. ${RENEW_HINT}`,
    );
  }
  const claims = payload as AccessClaims;
  const named = payload[format.merchantClaim];
  if (typeof named !== "string") {
    throw new InvalidToken(
      "token_claims_invalid",
      `The token's '${format.merchantClaim}' claim is missing or invalid (${named === undefined ? "missing" : "invalid"}). ${RENEW_HINT}`,
    );
  }
  if (!merchant || !owner) throw unknownMerchant();
  const scope = owner;
  // A key of this sandbox that the merchant's scenario no longer accepts: rotated away.
  if (kid === undefined || !scope.keys.accepts(kid)) throw unknownKid(String(kid));

  const now = scope.clock.nowSeconds();
  const leeway = scope.settings.leewaySeconds;
  if (typeof claims.nbf === "number" && claims.nbf > now + leeway) {
    throw new InvalidToken(
      "token_not_yet_valid",
      `The token is not valid before ${isoOfSeconds(claims.nbf)} (sandbox time is now ${isoOfSeconds(now)}). Check the clocks, then request a new access token from POST /api/v2/auth/token.`,
    );
  }
  if (claims.exp <= now - leeway) {
    throw new InvalidToken(
      "token_expired",
      `The access token expired at ${isoOfSeconds(claims.exp)} (sandbox time is now ${isoOfSeconds(now)}). Renew it before it expires: ${RENEW_HINT}`,
      claims.exp,
    );
  }
  if (claims.iat > now + leeway) {
    throw new InvalidToken(
      "token_not_yet_valid",
      `The token says it was issued at ${isoOfSeconds(claims.iat)}, after the sandbox's current time ${isoOfSeconds(now)}. Check the clocks, then request a new access token from POST /api/v2/auth/token.`,
    );
  }
  const expiredEarlyAt = judge.ledger.expiredEarlyAt(claims.jti, merchant.id, claims.iat);
  if (expiredEarlyAt !== undefined && expiredEarlyAt <= now) {
    throw new InvalidToken(
      "token_expired",
      `The access token was expired early by the sandbox at ${isoOfSeconds(expiredEarlyAt)}, before its exp ${isoOfSeconds(claims.exp)} (sandbox time is now ${isoOfSeconds(now)}). A client must handle a 401 by getting a new token: ${RENEW_HINT}`,
      expiredEarlyAt,
    );
  }
  if (merchant.disabled) {
    throw new InvalidToken(
      "merchant_disabled",
      `The merchant of this token ('${merchant.id}') has been disabled since the token was issued; its tokens are no longer accepted. Use an active merchant's credentials.`,
    );
  }
  if (judge.ledger.isRevoked(claims.jti, merchant.id, claims.iat)) {
    throw new InvalidToken("token_revoked", `The access token was revoked. ${RENEW_HINT}`);
  }
  // The login's token carries roles, not scopes: it has the rights of its merchant, as a
  // Symfony session of that user has on the API's other firewalled routes.
  if (loginToken) return { merchant, claims, scopes: new Set(merchant.scopes), loginToken };
  // A format without a scope claim gives its tokens the merchant's scopes, as the login's token has.
  if (format.scopeClaim === undefined) return { merchant, claims, scopes: new Set(merchant.scopes), loginToken };
  const written = payload[format.scopeClaim];
  const scopes = new Set(typeof written === "string" ? written.split(" ") : []);
  return { merchant, claims, scopes, loginToken };
}

const REQUIRED_CLAIMS: Array<[string, "string" | "number"]> = [
  ["iss", "string"],
  ["aud", "string"],
  ["sub", "string"],
  ["exp", "number"],
  ["iat", "number"],
  ["jti", "string"],
];

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return String(value);
  return typeof value === "string" ? `a string ('${echo(value, 64)}')` : typeof value === "object" ? "an object" : `a ${typeof value}`;
}
