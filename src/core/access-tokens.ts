import type { KeyRing } from "./keys.js";
import type { Merchant, MerchantRegistry } from "./merchants.js";
import type { SandboxSettings } from "./config.js";
import type { AccessClaims, IssueOptions, LoginClaims } from "./token-claims.js";
import { DEFAULT_TOKEN_FORMAT, type TokenFormat } from "./token-format.js";
import type { TokenLedger } from "./token-ledger.js";
import { TokenIssuer } from "./token-issuer.js";
import type { MerchantScope, VerifiedAccessToken } from "./token-scope.js";
import { TokenVerifier } from "./token-verifier.js";

/**
 * The sandbox's token service: issuing (token-issuer.ts) and verifying (token-verifier.ts, its
 * claims in access-claims-check.ts, the token's text in token-text.ts) the sandbox's JWTs. Two
 * kinds, told apart by the `typ` header: access tokens (`at+jwt`, RFC 9068) from
 * /api/v2/auth/token, and the deprecated login's session tokens (`JWT`, Lexik's shape), which
 * payment and cashout accept too unless the `loginToken` setting of the merchant's scenario says
 * `refused`. Each scenario writes its tokens in its profile's format (token-format.ts).
 */

export { ACCESS_TOKEN_TYP, DEFAULT_TOKEN_FORMAT, LOGIN_TOKEN_TYP, type TokenFormat } from "./token-format.js";
export type { MerchantScope, VerifiedAccessToken } from "./token-scope.js";

export class AccessTokens {
  private readonly issuer: TokenIssuer;
  private readonly verifier: TokenVerifier;

  constructor(
    /** Sandbox-wide settings: for tokens that name no merchant of a scenario. */
    settings: SandboxSettings,
    ring: KeyRing,
    merchants: MerchantRegistry,
    ledger: TokenLedger,
    scopeOf: (merchant: Merchant) => MerchantScope,
    /** The sandbox's own profile's format: for tokens that name no merchant of a scenario. */
    readonly format: TokenFormat = DEFAULT_TOKEN_FORMAT,
  ) {
    const issuer = new TokenIssuer(ring, ledger, scopeOf);
    this.issuer = issuer;
    this.verifier = new TokenVerifier(settings, ring, merchants, ledger, scopeOf, format, () => issuer.issuedWithoutKid);
  }

  issue(merchant: Merchant, options: IssueOptions): Promise<{ token: string; claims: AccessClaims }> {
    return this.issuer.issue(merchant, options);
  }

  /** The deprecated login's token: Lexik's claims (`username`, `roles`), typ `JWT`. */
  issueLoginToken(merchant: Merchant, options: IssueOptions): Promise<{ token: string; claims: LoginClaims }> {
    return this.issuer.issueLoginToken(merchant, options);
  }

  /** An access token's merchant, claims and scopes; an InvalidToken saying exactly what is wrong with it. */
  verify(token: string): Promise<VerifiedAccessToken> {
    return this.verifier.verify(token);
  }

  /** The merchant id of a token one of this sandbox's keys signed, whatever its claims; never throws (attribution.ts). */
  provenSubject(token: string): Promise<string | undefined> {
    return this.verifier.provenSubject(token);
  }
}
