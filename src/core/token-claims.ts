import type { JWTPayload } from "jose";
import type { SandboxSettings } from "./config.js";
import type { Merchant } from "./merchants.js";

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

export interface AccessClaims extends JWTPayload {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  scope: string;
  client_id: string;
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

/**
 * An access token's claims (RFC 9068): the registered ones, the client's api_key and its scopes.
 * `merchantClaim` (a response profile's jwt.merchantClaim) carries the merchant id too, beside `sub`.
 */
export function accessTokenClaims(issuer: TokenIssuer, merchant: Merchant, options: IssueOptions, merchantClaim = "sub"): AccessClaims {
  const claims = registeredClaims(issuer, merchant, options, merchantClaim) as AccessClaims;
  claims.client_id = merchant.apiKey;
  claims.scope = merchant.scopes.join(" ");
  return claims;
}

/** The deprecated login's token claims. */
export function loginTokenClaims(issuer: TokenIssuer, merchant: Merchant, options: IssueOptions, merchantClaim = "sub"): LoginClaims {
  const claims = registeredClaims(issuer, merchant, options, merchantClaim) as LoginClaims;
  claims.username = merchant.login?.email;
  claims.roles = ["ROLE_MERCHANT"];
  return claims;
}

/**
 * The registered claims, in the order tokens carry them: a profile's merchant claim first (when it
 * is not `sub`), then iss, sub, aud, iat, exp, jti, and nbf when asked. Built by assignment, not
 * spreads: spreads were a third of the token exchange's claims cost in its profile.
 */
function registeredClaims(issuer: TokenIssuer, merchant: Merchant, options: IssueOptions, merchantClaim: string): JWTPayload {
  const claims: JWTPayload = {};
  if (merchantClaim !== "sub") claims[merchantClaim] = merchant.id;
  claims.iss = issuer.issuer;
  claims.sub = merchant.id;
  claims.aud = issuer.audience;
  claims.iat = options.issuedAt;
  claims.exp = options.issuedAt + options.ttlSeconds;
  claims.jti = options.jti;
  if (options.notBefore !== undefined) claims.nbf = options.notBefore;
  return claims;
}
