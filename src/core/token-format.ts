import type { SigningKey } from "./keys.js";

/**
 * How the tokens of one scenario are written: a response profile's jwt section (docs/profiles.md,
 * "The token"), as the token service, minting and verification use it. One object per profile,
 * shared by every scenario and session that answers in it.
 */
export interface TokenFormat {
  /** The access token's typ header; undefined: no typ (a profile's `typ: none`). */
  readonly typ: string | undefined;
  /** Whether the header names its key; without, verification tries the merchant's scenario's keys. */
  readonly kid: boolean;
  /** The claim that names the merchant: sub unless a profile says otherwise. */
  readonly merchantClaim: string;
  /** What that claim holds: the merchant id, or its login e-mail (Lexik's username; the id for a merchant without a login). */
  readonly merchantValue: "merchant_id" | "login";
  /** Whether tokens carry iss and aud (a profile's `issuer: none` / `audience: none` leaves them out, and unchecked). */
  readonly iss: boolean;
  readonly aud: boolean;
  /** Extra static claims on every access and login token (never a reserved one: RESERVED_CLAIMS). */
  readonly claims: Readonly<Record<string, unknown>> | undefined;
  /**
   * The claim that carries the client's api_key (client_id; Keycloak's azp, Okta's cid), or
   * undefined for none: then an access token is told from the login's by its typ alone.
   */
  readonly clientClaim: string | undefined;
  /** The claim that carries the scopes (scope, Azure's scp), or undefined for none: the merchant's scopes. */
  readonly scopeClaim: string | undefined;
  /** The order of the header's members, as the provider writes them; undefined: tokenHeader's own. */
  readonly headerOrder?: readonly HeaderMember[] | undefined;
}

export const HEADER_MEMBERS = ["alg", "kid", "typ"] as const;
export type HeaderMember = (typeof HEADER_MEMBERS)[number];

export const ACCESS_TOKEN_TYP = "at+jwt";
export const LOGIN_TOKEN_TYP = "JWT";

/**
 * Whether a token is the deprecated login's: typ JWT and none of the client claims every access
 * token carries (`clientClaims`: client_id, or the names profiles give it). A profile may give
 * access tokens the login's typ too; its client claim then tells them apart.
 */
export function isLoginToken(typ: unknown, payload: Readonly<Record<string, unknown>>, clientClaims: readonly string[]): boolean {
  return typ === LOGIN_TOKEN_TYP && clientClaims.every((claim) => payload[claim] === undefined);
}

export const DEFAULT_TOKEN_FORMAT: TokenFormat = Object.freeze({
  typ: ACCESS_TOKEN_TYP,
  kid: true,
  merchantClaim: "sub",
  merchantValue: "merchant_id",
  iss: true,
  aud: true,
  claims: undefined,
  clientClaim: "client_id",
  scopeClaim: "scope",
});

/**
 * Claims a profile's `claims` may not set, besides its merchant claim: the ones the sandbox writes
 * and reads itself (times and revocation, who the token is for, what it allows, whose client).
 */
export const RESERVED_CLAIMS = ["iss", "sub", "aud", "iat", "exp", "nbf", "jti", "client_id", "scope"] as const;

/**
 * Whether tokens of this format carry `sub`: always when it is the merchant claim, and beside
 * another merchant claim that holds the id (as before merchantValue existed); not beside a login
 * e-mail (Lexik's token has `username` and no `sub`).
 */
export function writesSub(format: Pick<TokenFormat, "merchantClaim" | "merchantValue">): boolean {
  return format.merchantClaim === "sub" || format.merchantValue === "merchant_id";
}

/** The value of the merchant claim for this merchant: its id, or its login e-mail when the format says so and it has one. */
export function merchantClaimValue(
  format: Pick<TokenFormat, "merchantValue">,
  merchant: { id: string; login?: { email: string } | undefined },
): string {
  return format.merchantValue === "login" && merchant.login ? merchant.login.email : merchant.id;
}

/**
 * A token's protected header: in the profile's headerOrder when it gives one (golang-jwt and jose
 * write alg, then typ); else with a kid as the sandbox always wrote it (alg, kid, typ), without as
 * lcobucci/jwt writes it for Lexik and tymon (typ, then alg).
 */
export function tokenHeader(format: TokenFormat, key: SigningKey, typ: string | undefined): { alg: SigningKey["alg"]; kid?: string; typ?: string } {
  if (format.headerOrder)
    return inOrder(format.headerOrder, { alg: key.alg, ...(format.kid && { kid: key.kid }), ...(typ !== undefined && { typ }) });
  if (!format.kid) return typ === undefined ? { alg: key.alg } : { typ, alg: key.alg };
  return typ === undefined ? { alg: key.alg, kid: key.kid } : { alg: key.alg, kid: key.kid, typ };
}

/** The members in the order given, then any it does not name (alg is always written). */
function inOrder<T extends { alg: string }>(order: readonly HeaderMember[], members: T): T {
  const out: Record<string, unknown> = {};
  for (const name of [...order, ...HEADER_MEMBERS]) if (name in members && !(name in out)) out[name] = members[name as keyof T];
  return out as T;
}
