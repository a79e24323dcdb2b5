import { encodeJwsHeader, signWithEncodedHeader } from "./jws.js";
import type { KeyRing, SigningKey } from "./keys.js";
import type { Merchant } from "./merchants.js";
import { accessTokenClaims, loginTokenClaims, type AccessClaims, type IssueOptions, type LoginClaims } from "./token-claims.js";
import { LOGIN_TOKEN_TYP, tokenHeader, type TokenFormat } from "./token-format.js";
import type { TokenLedger } from "./token-ledger.js";
import type { MerchantScope } from "./token-scope.js";

/**
 * Issuing the sandbox's JWTs: the access token of /api/v2/auth/token and the deprecated login's
 * token, each signed with the merchant's scenario's key in that scenario's format and recorded in
 * the ledger.
 */
export class TokenIssuer {
  /**
   * The headers each key writes in each format (access and login token), made and encoded once
   * per key rather than per token. Weak: a rotated-away or retired key takes its entry with it.
   */
  private readonly headers = new WeakMap<TokenFormat, WeakMap<SigningKey, { access: string; login: string }>>();
  private kidless = false;

  constructor(
    private readonly ring: KeyRing,
    private readonly ledger: TokenLedger,
    private readonly scopeOf: (merchant: Merchant) => MerchantScope,
  ) {}

  /** Some scenario's profile has written a token without a kid (TokenVerifier's kid-less path reads it). */
  get issuedWithoutKid(): boolean {
    return this.kidless;
  }

  async issue(merchant: Merchant, options: IssueOptions): Promise<{ token: string; claims: AccessClaims }> {
    const { scope, key } = await this.signingScope(merchant);
    const claims = accessTokenClaims(scope.settings, merchant, options, scope.tokenFormat);
    const token = await signWithEncodedHeader(this.headersOf(scope.tokenFormat, key).access, claims, key);
    this.ledger.record({ jti: claims.jti, merchantId: merchant.id, issuedAt: claims.iat, expiresAt: claims.exp }, options.issuedAt);
    // Not put in `verifiedSignatures` here: most tokens of an exchange storm are never sent back,
    // and each entry made at issue cost the exchange CPU (docs/performance.md#verifying) and the GC an old-space entry,
    // while pushing out the tokens that are in use. The first call that sends it checks the
    // signature once and remembers it then.
    return { token, claims };
  }

  /** The deprecated login's token: Lexik's claims (`username`, `roles`), typ `JWT`. */
  async issueLoginToken(merchant: Merchant, options: IssueOptions): Promise<{ token: string; claims: LoginClaims }> {
    const { scope, key } = await this.signingScope(merchant);
    const claims = loginTokenClaims(scope.settings, merchant, options, scope.tokenFormat);
    // Recorded like an access token: payment and cashout may accept it, and then revocations and
    // early expiry of "the tokens the merchant holds" must count it by issue order too.
    this.ledger.record({ jti: claims.jti, merchantId: merchant.id, issuedAt: claims.iat, expiresAt: claims.exp }, options.issuedAt);
    return { token: await signWithEncodedHeader(this.headersOf(scope.tokenFormat, key).login, claims, key), claims };
  }

  /** The merchant's scenario and the key it signs with now; notes a format without kids. */
  private async signingScope(merchant: Merchant): Promise<{ scope: MerchantScope; key: SigningKey }> {
    // Only while a start key is on its way (see KeyRing.ready); after that, no await.
    if (this.ring.ready) await this.ring.ready;
    const scope = this.scopeOf(merchant);
    if (!scope.tokenFormat.kid) this.kidless = true;
    return { scope, key: scope.keys.signing };
  }

  private headersOf(format: TokenFormat, key: SigningKey): { access: string; login: string } {
    let byKey = this.headers.get(format);
    if (!byKey) {
      byKey = new WeakMap();
      this.headers.set(format, byKey);
    }
    let headers = byKey.get(key);
    if (!headers) {
      headers = {
        access: encodeJwsHeader(tokenHeader(format, key, format.typ)),
        login: encodeJwsHeader(tokenHeader(format, key, LOGIN_TOKEN_TYP)),
      };
      byKey.set(key, headers);
    }
    return headers;
  }
}
