import type { JWTPayload } from "jose";
import type { SandboxSettings } from "./config.js";
import type { Merchant } from "./merchants.js";
import { DEFAULT_TOKEN_FORMAT, merchantClaimValue, type TokenFormat, writesSub } from "./token-format.js";

/**
 * The claims of every token the sandbox makes: access tokens from the token exchange, the deprecated
 * login's tokens, and the tokens the control plane mints. Built in one place so the three cannot
 * drift apart (a claim added to issued tokens but not to minted ones would make a "valid" minted
 * token differ from a real one).
 */

/** When a token says it was issued, for how long, its id, and an optional `nbf`. */
export interface IssueOptions {
  /** When the token says it was issued (seconds, on the scenario's clock). */
  issuedAt: number;
  ttlSeconds: number;
  jti: string;
  /** A `nbf` claim, for tokens that are not valid yet (scenario action issue_token.not_before). */
  notBefore?: number;
}

/** `sub`, `iss` and `aud` are absent under a format that leaves them out (token-format.ts). */
export interface AccessClaims extends JWTPayload {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  /** Under the format's scopeClaim and clientClaim: absent here when a profile renames or drops them. */
  scope?: string;
  client_id?: string;
}

/** The deprecated login's token: Lexik's claims (`username`, `roles`) on top of the registered ones. */
export interface LoginClaims extends JWTPayload {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  username: string | undefined;
  roles: string[];
}

/** Who issues the sandbox's tokens and for whom. */
export type TokenIssuer = Pick<SandboxSettings, "issuer" | "audience">;

/** What of a token format the claims depend on. */
export type ClaimFormat = Pick<TokenFormat, "merchantClaim" | "merchantValue" | "iss" | "aud" | "claims" | "clientClaim" | "scopeClaim">;

/**
 * An access token's claims (RFC 9068): the registered ones, a profile's extra claims, the client's
 * api_key and its scopes (under the format's clientClaim and scopeClaim). `format.merchantClaim` (a response profile's jwt.merchantClaim) carries
 * the merchant id (or login e-mail), beside `sub` unless it holds the login e-mail.
 */
export function accessTokenClaims(
  issuer: TokenIssuer,
  merchant: Merchant,
  options: IssueOptions,
  format: ClaimFormat = DEFAULT_TOKEN_FORMAT,
): AccessClaims {
  const claims = registeredClaims(issuer, merchant, options, format) as AccessClaims;
  if (format.claims) Object.assign(claims, format.claims);
  // The sandbox's own bookkeeping, under the names the provider uses (or none, where it has none).
  if (format.clientClaim !== undefined) claims[format.clientClaim] = merchant.apiKey;
  if (format.scopeClaim !== undefined) claims[format.scopeClaim] = merchant.scopes.join(" ");
  return claims;
}

/**
 * The deprecated login's token claims: Lexik's `username` (the login e-mail) and `roles`, unless
 * the merchant claim is `username` (it wins: the token must name its merchant as the format
 * says) or the profile's claims give `roles` (Lexik's real token says ROLE_USER).
 */
export function loginTokenClaims(
  issuer: TokenIssuer,
  merchant: Merchant,
  options: IssueOptions,
  format: ClaimFormat = DEFAULT_TOKEN_FORMAT,
): LoginClaims {
  const claims = registeredClaims(issuer, merchant, options, format) as LoginClaims;
  if (format.merchantClaim !== "username") claims.username = merchant.login?.email;
  claims.roles = ["ROLE_MERCHANT"];
  if (format.claims) Object.assign(claims, format.claims);
  return claims;
}

/**
 * The registered claims, in the order tokens carry them: a profile's merchant claim first (when it
 * is not `sub`), then iss, sub, aud, iat, exp, jti, and nbf when asked; iss, sub and aud only when
 * the format has them. Built by assignment, not spreads: spreads were a third of the token
 * exchange's claims cost in its profile.
 */
function registeredClaims(issuer: TokenIssuer, merchant: Merchant, options: IssueOptions, format: ClaimFormat): JWTPayload {
  const claims: JWTPayload = {};
  const named = merchantClaimValue(format, merchant);
  if (format.merchantClaim !== "sub") claims[format.merchantClaim] = named;
  if (format.iss) claims.iss = issuer.issuer;
  if (writesSub(format)) claims.sub = format.merchantClaim === "sub" ? named : merchant.id;
  if (format.aud) claims.aud = issuer.audience;
  claims.iat = options.issuedAt;
  claims.exp = options.issuedAt + options.ttlSeconds;
  claims.jti = options.jti;
  if (options.notBefore !== undefined) claims.nbf = options.notBefore;
  return claims;
}
