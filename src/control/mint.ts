import type { JWTPayload } from "jose";
import { LOGIN_TOKEN_TYP, tokenHeader, type TokenFormat } from "../core/token-format.js";
import { parseDurationSeconds } from "../core/duration.js";
import { MAX_TOKEN_TTL_SECONDS, MAX_TOKEN_TTL_TEXT } from "../core/config.js";
import { echo } from "../core/echo.js";
import { InvalidRequest, NotFound } from "../core/errors.js";
import { signCompactJws, unsecuredCompactJws } from "../core/jws.js";
import type { Merchant } from "../core/merchants.js";
import { accessTokenClaims, loginTokenClaims, type AccessClaims } from "../core/token-claims.js";
import { closest } from "../core/source/suggest.js";
import type { ControlContext } from "./context.js";

/**
 * Minting tokens on demand (POST /__sandbox/tokens), valid or deliberately bad, so a client that
 * verifies tokens itself can be tested against the whole catalogue. Each variant says which refusal
 * code the sandbox itself gives that token on a protected endpoint.
 */
export const MINT_VARIANTS = {
  valid: undefined,
  expired: "token_expired",
  not_yet_valid: "token_not_yet_valid",
  wrong_audience: "token_wrong_audience",
  wrong_issuer: "token_wrong_issuer",
  unknown_kid: "token_unknown_kid",
  foreign_key: "token_unknown_kid",
  alg_none: "token_algorithm_rejected",
  bad_signature: "token_signature_invalid",
  /** With the `loginToken` setting at `refused`; accepted (null) by default. */
  login_token: "token_not_access_token",
} as const;
export type MintVariant = keyof typeof MINT_VARIANTS;

export interface MintRequest {
  /** api_key or merchant id; default: the primary scenario's first merchant. */
  merchant?: string;
  variant?: MintVariant;
  /** Lifetime for valid tokens (default: the scenario's token TTL). */
  ttl?: string | number;
}

export interface MintedToken {
  token: string;
  variant: MintVariant;
  header: Record<string, unknown>;
  claims: JWTPayload;
  /** The code the sandbox answers for this token on /api/v2/payment/*; null for a valid token. */
  expected_error: string | null;
}

export async function mintToken(ctx: ControlContext, request: MintRequest): Promise<MintedToken> {
  const variant = request.variant ?? "valid";
  // An own-property check, not `in`: "constructor", "__proto__" or "toString" are on every
  // object's prototype, and used to mint a valid token under a variant that does not exist.
  if (!Object.hasOwn(MINT_VARIANTS, variant)) {
    const names = Object.keys(MINT_VARIANTS);
    const suggestion = closest(String(variant), names);
    throw new InvalidRequest(
      "mint_variant_unknown",
      `variant '${echo(String(variant), 64)}' is not known${suggestion ? ` (did you mean '${suggestion}'?)` : ""}; use one of: ${names.join(", ")}.`,
    );
  }
  const merchant = findMerchant(ctx, request.merchant);
  const scenario = ctx.scenarios.of(merchant);
  // A start key still on its way is waited for before the clock is read (the token's times).
  if (ctx.ring.ready) await ctx.ring.ready;
  const now = scenario.clock.nowSeconds();
  let ttl = scenario.settings.tokenTtlSeconds;
  if (request.ttl !== undefined) {
    try {
      ttl = parseDurationSeconds(request.ttl, "ttl");
    } catch {
      throw new InvalidRequest("mint_ttl_invalid", `ttl must be a duration such as "90s", "59m" or "1h".`);
    }
    // Regression: a ttl of 1e300 made a token whose exp no date can show (a 500 on its first use).
    if (ttl > MAX_TOKEN_TTL_SECONDS)
      throw new InvalidRequest("mint_ttl_invalid", `ttl must be at most ${MAX_TOKEN_TTL_TEXT}, got '${echo(String(request.ttl), 64)}'.`);
    // A "valid" token that is already expired (ttl 0, or under half a second) would pass for a
    // valid one in the answer and fail on first use; the catalogue has a variant for that.
    if (ttl < 1)
      throw new InvalidRequest(
        "mint_ttl_invalid",
        `ttl must be at least 1s, got '${echo(String(request.ttl), 64)}'. For a token that is already expired, use variant "expired".`,
      );
  }
  const jti = ctx.newTokenId();
  // Far enough past (or before) the scenario's leeway that the sandbox itself refuses them.
  const margin = scenario.settings.leewaySeconds;
  const issuedAt = variant === "expired" ? now - margin - ttl - 60 : variant === "not_yet_valid" ? now + margin + 300 : now;
  // In the format of the merchant's scenario (its profile's jwt section), as the sandbox issues them.
  const format = scenario.tokenFormat;
  const times = { issuedAt, ttlSeconds: ttl, jti, ...(variant === "not_yet_valid" ? { notBefore: issuedAt } : {}) };
  const claims: AccessClaims = {
    ...(variant === "login_token"
      ? (loginTokenClaims(scenario.settings, merchant, times, format) as unknown as AccessClaims)
      : accessTokenClaims(scenario.settings, merchant, times, format)),
    ...(variant === "wrong_issuer" ? { iss: "https://not-the-sandbox.test" } : {}),
    ...(variant === "wrong_audience" ? { aud: "another-api" } : {}),
  };
  const key = scenario.keys.signing;
  const typ = variant === "login_token" ? LOGIN_TOKEN_TYP : format.typ;
  let token: string;
  let header: Record<string, unknown>;
  if (variant === "alg_none") {
    const unsecured = { ...tokenHeader(format, key, typ), alg: "none" as const };
    header = unsecured;
    token = unsecuredCompactJws(unsecured, claims);
  } else {
    const signer = variant === "foreign_key" ? await ctx.ring.outsider(key.alg) : key;
    // unknown_kid names a key even under a format without kids: that is the variant.
    const signed =
      variant === "unknown_kid"
        ? { alg: signer.alg, kid: "kid-not-in-this-sandbox", ...(typ !== undefined && { typ }) }
        : tokenHeader(format, signer, typ);
    header = signed;
    // The sandbox's own signer: an ES256 signature in the low-S form verification insists on.
    token = await signCompactJws(signed, claims, signer);
    if (variant === "bad_signature") token = tamper(token);
  }
  if (variant === "valid" || variant === "login_token") {
    ctx.ledger.record({ jti, merchantId: merchant.id, issuedAt: claims.iat, expiresAt: claims.exp }, now, true);
  }
  // The login's kind is refused only where the merchant's scenario sets loginToken: refused.
  const loginTokenAccepted = variant === "login_token" && scenario.settings.loginToken === "accepted";
  return { token, variant, header, claims, expected_error: loginTokenAccepted ? null : expectedError(variant, format) };
}

/**
 * The code the sandbox gives the variant's token in this format: without iss or aud the sandbox
 * checks neither (a wrong one is accepted, as the provider would), and without kids a foreign key's
 * token is tried with the merchant's keys, so its signature is what fails.
 */
function expectedError(variant: MintVariant, format: TokenFormat): string | null {
  if ((variant === "wrong_issuer" && !format.iss) || (variant === "wrong_audience" && !format.aud)) return null;
  if (variant === "foreign_key" && !format.kid) return "token_signature_invalid";
  return MINT_VARIANTS[variant] ?? null;
}

function findMerchant(ctx: ControlContext, ref: string | undefined): Merchant {
  if (ref === undefined) return ctx.scenarios.primary.merchants[0]!;
  const m = ctx.merchants.byKey(ref) ?? ctx.merchants.findById(ref);
  if (!m)
    throw new NotFound(
      `No merchant with api_key or id '${echo(ref, 64)}'. Use a loaded merchant's api_key (see GET /__sandbox/health and merchant-sandbox scenarios) or a session's.`,
    );
  return m;
}

/** Flips one character in the middle of the signature, so it is well-formed but does not verify. */
function tamper(token: string): string {
  const [h, p, s] = token.split(".") as [string, string, string];
  const i = Math.floor(s.length / 2);
  const flipped = s[i] === "A" ? "B" : "A";
  return `${h}.${p}.${s.slice(0, i)}${flipped}${s.slice(i + 1)}`;
}
