import type { KeyObject } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, type JWTPayload, type ProtectedHeaderParameters } from "jose";
import { isoOfSeconds, type SandboxClock } from "./clock.js";
import type { SandboxSettings } from "./config.js";
import { isHighS } from "./ecdsa.js";
import { InvalidToken, LoginTokenRefused } from "./errors.js";
import { encodeJwsHeader, signWithEncodedHeader } from "./jws.js";
import { verifierOf, verifyCompactJws } from "./jws-verify.js";
import { echo } from "./echo.js";
import { compactForm } from "./jwt-runs.js";
import type { KeyRing, ScenarioKeys, SigningKey } from "./keys.js";
import type { Merchant, MerchantRegistry } from "./merchants.js";
import { accessTokenClaims, loginTokenClaims, type AccessClaims, type IssueOptions, type LoginClaims } from "./token-claims.js";
import { DEFAULT_TOKEN_FORMAT, LOGIN_TOKEN_TYP, merchantClaimValue, tokenHeader, type TokenFormat, writesSub } from "./token-format.js";
import type { TokenLedger } from "./token-ledger.js";

/**
 * Issuing and verifying the sandbox's JWTs. Two kinds, told apart by the `typ` header:
 * access tokens (`at+jwt`, RFC 9068) from /api/v2/auth/token, and the deprecated login's
 * session tokens (`JWT`, Lexik's shape), which payment and cashout accept too unless the
 * `loginToken` setting of the merchant's scenario says `refused`. Verification trusts nothing the
 * token says about how to verify it: the key comes from our own ring by `kid` and the algorithm
 * from that key; `jku`, `x5u` and embedded `jwk` headers are never followed. Times are checked on
 * the clock of the merchant's scenario, with that scenario's leeway. Each scenario writes its
 * tokens in its profile's format (token-format.ts): a token without a kid is verified with the keys
 * its merchant's scenario accepts, when that scenario's format says kid: false.
 */

/** What verification needs to know about the scenario a merchant belongs to. */
export interface MerchantScope {
  readonly clock: SandboxClock;
  readonly settings: SandboxSettings;
  readonly keys: ScenarioKeys;
  /** How the scenario's tokens are written (its response profile's jwt section). */
  readonly tokenFormat: TokenFormat;
}

export { ACCESS_TOKEN_TYP, DEFAULT_TOKEN_FORMAT, LOGIN_TOKEN_TYP, type TokenFormat } from "./token-format.js";
const RENEW_HINT = "Request a new access token from POST /api/v2/auth/token.";
const SEND_UNCHANGED = "Send the access_token value from POST /api/v2/auth/token unchanged.";

export interface VerifiedAccessToken {
  merchant: Merchant;
  /** An access token's claims; a login token's have `username` and `roles` instead of `client_id` and `scope`. */
  claims: AccessClaims;
  scopes: Set<string>;
  /** The token is the deprecated login's (typ JWT), accepted by the `loginToken` setting. */
  loginToken: boolean;
}

export class AccessTokens {
  /**
   * Tokens whose signature this sandbox already checked, by their exact text. The same
   * string means the same signature, so a repeat skips the signature check (most of a protected
   * call's CPU); claims, time, revocation and key acceptance are still checked every time.
   * Bounded, oldest out first: an integration uses a handful of tokens at a time, and each entry
   * holds a whole token (~1 KB), so a small cap keeps memory flat under a token-exchange storm.
   */
  private readonly verifiedSignatures = new Map<string, Verified>();
  private static readonly MAX_VERIFIED = 1_000;
  /**
   * The headers each key writes in each format (access and login token), made and encoded once
   * per key rather than per token. Weak: a rotated-away or retired key takes its entry with it.
   */
  private readonly headers = new WeakMap<TokenFormat, WeakMap<SigningKey, { access: string; login: string }>>();
  /** Each key as node:crypto verifies with it (jws-verify.ts), made on its first use; gone with the key. */
  private readonly verifiers = new WeakMap<SigningKey, KeyObject>();
  private readonly utf8 = new TextDecoder();
  /** Some scenario's profile writes tokens without a kid (see verifiedWithoutKid). */
  private issuedWithoutKid = false;

  constructor(
    /** Sandbox-wide settings: for tokens that name no merchant of a scenario. */
    private readonly settings: SandboxSettings,
    private readonly ring: KeyRing,
    private readonly merchants: MerchantRegistry,
    private readonly ledger: TokenLedger,
    private readonly scopeOf: (merchant: Merchant) => MerchantScope,
    /** The sandbox's own profile's format: for tokens that name no merchant of a scenario. */
    readonly format: TokenFormat = DEFAULT_TOKEN_FORMAT,
  ) {}

  async issue(merchant: Merchant, options: IssueOptions): Promise<{ token: string; claims: AccessClaims }> {
    // Only while a start key is on its way (see KeyRing.ready); after that, no await.
    if (this.ring.ready) await this.ring.ready;
    const scope = this.scopeOf(merchant);
    const key = scope.keys.signing;
    const claims = accessTokenClaims(scope.settings, merchant, options, scope.tokenFormat);
    if (!scope.tokenFormat.kid) this.issuedWithoutKid = true;
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
    if (this.ring.ready) await this.ring.ready;
    const scope = this.scopeOf(merchant);
    const key = scope.keys.signing;
    const claims = loginTokenClaims(scope.settings, merchant, options, scope.tokenFormat);
    if (!scope.tokenFormat.kid) this.issuedWithoutKid = true;
    // Recorded like an access token: payment and cashout may accept it, and then revocations and
    // early expiry of "the tokens the merchant holds" must count it by issue order too.
    this.ledger.record({ jti: claims.jti, merchantId: merchant.id, issuedAt: claims.iat, expiresAt: claims.exp }, options.issuedAt);
    return { token: await signWithEncodedHeader(this.headersOf(scope.tokenFormat, key).login, claims, key), claims };
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

  /**
   * Verifies an access token. Every refusal is an InvalidToken whose code and description say
   * exactly what is wrong with it. The order: what the token is, its signature, its claims, whose
   * it is, then time (on the owner's scenario clock), early expiry, disabled merchant, revocation.
   */
  async verify(token: string): Promise<VerifiedAccessToken> {
    if (this.merchants.byPayment(token)) {
      throw new InvalidToken(
        "payment_token_not_accepted",
        "This is a merchant payment token; it only authorises POST /api/v2/payment/init. Payment and cashout endpoints need the access token (JWT) from POST /api/v2/auth/token.",
      );
    }
    // A token checked before is read from the cache without a promise of its own: most calls.
    const { header, payload, kid } = this.verifiedSignatures.get(token) ?? (await this.checkedSignature(token));
    return this.checkAccessClaims(header, payload, kid);
  }

  /**
   * The merchant id of a token whose signature verifies with one of this sandbox's keys, whatever
   * its claims say about time, type or revocation; undefined for anything else. This is what proves
   * who a request comes from (see attribution.ts). Never throws. The check is remembered, so the
   * endpoint's full verification of the same token does not check the signature again.
   */
  async provenSubject(token: string): Promise<string | undefined> {
    try {
      const { payload } = this.verifiedSignatures.get(token) ?? (await this.checkedSignature(token));
      return this.merchantOf(payload)?.id;
    } catch {
      return undefined;
    }
  }

  /**
   * The merchant a token's claims name, as its own scenario's format writes it (the claim, and the
   * id or the login e-mail in it); undefined when none does. The sandbox's own merchant claim is
   * looked at first (one lookup for most tokens); then each string claim, once: linear in the
   * payload, which may be anyone's text when the token has no kid yet.
   */
  private merchantOf(payload: JWTPayload): Merchant | undefined {
    const first = this.namedBy(payload, payload[this.format.merchantClaim]);
    if (first) return first;
    for (const claim in payload) {
      const found = this.namedBy(payload, payload[claim]);
      if (found) return found;
    }
    return undefined;
  }

  private namedBy(payload: JWTPayload, value: unknown): Merchant | undefined {
    if (typeof value !== "string") return undefined;
    const merchant = this.merchants.findById(value) ?? this.merchants.byLoginEmail(value);
    if (!merchant) return undefined;
    const format = this.scopeOf(merchant).tokenFormat;
    return payload[format.merchantClaim] === merchantClaimValue(format, merchant) ? merchant : undefined;
  }

  /**
   * The header and payload of a token signed by one of our keys, remembered; an InvalidToken saying
   * why not. The callers look in `verifiedSignatures` first.
   */
  private async checkedSignature(token: string): Promise<Verified> {
    // A token is judged against every key, so none may still be on its way: until then "unknown
    // key" or "algorithm not accepted" would be wrong. Only while one is (see KeyRing.ready).
    if (this.ring.ready) await this.ring.ready;
    const header = this.decodeHeader(token);
    if (typeof header.kid === "string" && this.ring.endedKid(header.kid)) this.refuseOfEndedScenario(token, header);
    const alg = String(header.alg);
    if (!this.ring.hasAlgorithm(alg)) {
      throw new InvalidToken(
        "token_algorithm_rejected",
        `The token's algorithm '${echo(alg, 80)}' is not accepted; this sandbox signs and accepts ${this.ring.algorithms().join(" and ")} only. ${SEND_UNCHANGED}`,
      );
    }
    const { key, bytes } =
      typeof header.kid === "string" ? this.verifiedByKid(token, header, header.kid, alg) : this.verifiedWithoutKid(token, header, alg);
    // After the signature: a token that fails it is refused for that, and only an otherwise
    // authentic token gets these refusals, which are about its text, not its origin.
    assertOneText(token, key.alg);
    let payload: JWTPayload;
    try {
      payload = JSON.parse(this.utf8.decode(bytes)) as JWTPayload;
    } catch (e) {
      throw this.explain(e);
    }
    const verified = { header, payload, kid: key.kid };
    this.remember(token, verified);
    return verified;
  }

  private verifiedByKid(token: string, header: ProtectedHeaderParameters, kid: string, alg: string): { key: SigningKey; bytes: Uint8Array } {
    const key = this.ring.find(kid);
    if (!key) throw unknownKid(kid);
    if (key.alg !== alg) {
      throw new InvalidToken(
        "token_algorithm_rejected",
        `The token's algorithm '${echo(alg, 80)}' is not the algorithm of its key (${key.alg}). ${SEND_UNCHANGED}`,
      );
    }
    try {
      return { key, bytes: verifyCompactJws(token, header, key, this.verifierOf(key)) };
    } catch (e) {
      throw this.explain(e);
    }
  }

  /**
   * A token without a kid, as a profile with `kid: false` writes them: verified with the keys its
   * merchant's scenario accepts, the signing key first, then the others newest first (one key
   * for most scenarios; more only while a rotation keeps old ones). The merchant is read from the
   * claims before the signature is checked, only to pick those keys: nothing else is trusted until
   * one verifies. A merchant whose scenario names its keys gets token_kid_missing, as before.
   */
  private verifiedWithoutKid(token: string, header: ProtectedHeaderParameters, alg: string): { key: SigningKey; bytes: Uint8Array } {
    let claimed: JWTPayload | undefined;
    try {
      claimed = decodeJwt(token);
    } catch {
      claimed = undefined;
    }
    const merchant = claimed && this.merchantOf(claimed);
    const scope = merchant && this.scopeOf(merchant);
    if (!scope || scope.tokenFormat.kid) {
      // Where kid-less tokens are issued, one that names no live merchant is most likely of a
      // session that ended: say that, not that it lacks a kid. Under the sandbox's own kid-less
      // format its claims are judged first, as any token's.
      if (!merchant && (!this.format.kid || this.issuedWithoutKid)) {
        if (!claimed) throw this.explain(undefined);
        if (!this.format.kid) this.checkAccessClaims(header, claimed, undefined);
        throw unknownMerchant();
      }
      throw new InvalidToken("token_kid_missing", `The token has no 'kid' header, so no key can verify it. ${RENEW_HINT}`);
    }
    const keys = [scope.keys.signing, ...[...scope.keys.accepted].reverse().map((kid) => this.ring.find(kid))].filter(
      (key, i, all): key is SigningKey => key !== undefined && key.alg === alg && all.indexOf(key) === i,
    );
    if (keys.length === 0) {
      throw new InvalidToken(
        "token_algorithm_rejected",
        `The token's algorithm '${echo(alg, 80)}' is not the algorithm of its merchant's keys (${scope.keys.signing.alg}). ${SEND_UNCHANGED}`,
      );
    }
    for (const key of keys) {
      try {
        return { key, bytes: verifyCompactJws(token, header, key, this.verifierOf(key)) };
      } catch (e) {
        if (!(e instanceof joseErrors.JWSSignatureVerificationFailed)) throw this.explain(e);
      }
    }
    throw this.explain(new joseErrors.JWSSignatureVerificationFailed());
  }

  /**
   * A token naming the key of a session that ended: the key is gone, so the signature cannot be
   * checked, but every token that key signed is of a merchant that is gone too. Its claims are
   * read, never trusted, to give the answer it got while the key was kept (token_unknown_merchant,
   * or what the claims check says first); a token that names a live merchant is forged: unknown kid.
   */
  private refuseOfEndedScenario(token: string, header: ProtectedHeaderParameters): never {
    let payload: JWTPayload;
    try {
      payload = decodeJwt(token);
    } catch {
      throw unknownKid(String(header.kid));
    }
    this.checkAccessClaims(header, payload, String(header.kid));
    throw unknownKid(String(header.kid));
  }

  private verifierOf(key: SigningKey): KeyObject {
    let verifier = this.verifiers.get(key);
    if (!verifier) {
      verifier = verifierOf(key);
      this.verifiers.set(key, verifier);
    }
    return verifier;
  }

  private remember(token: string, verified: Verified): void {
    if (this.verifiedSignatures.size >= AccessTokens.MAX_VERIFIED) {
      this.verifiedSignatures.delete(this.verifiedSignatures.keys().next().value!);
    }
    this.verifiedSignatures.set(token, verified);
  }

  private decodeHeader(token: string): ProtectedHeaderParameters {
    const form = compactForm(token);
    if (form === "jwe") {
      throw new InvalidToken(
        "token_encrypted",
        `The token is an encrypted JWT (JWE); this API accepts only the signed access token (JWS) from POST /api/v2/auth/token.`,
      );
    }
    if (form !== "jws") {
      throw new InvalidToken(
        "token_malformed",
        `The bearer token is not a JWT (expected three base64url parts separated by dots). ${SEND_UNCHANGED}`,
      );
    }
    try {
      return decodeProtectedHeader(token);
    } catch {
      throw new InvalidToken("token_malformed", `The token's header is not valid base64url-encoded JSON. ${SEND_UNCHANGED}`);
    }
  }

  /**
   * @param kid The key that verified the token (its header's kid, or the key a kid-less token was
   *   verified with): a rotation may have taken it out of the merchant's scenario since.
   */
  private checkAccessClaims(header: ProtectedHeaderParameters, payload: JWTPayload, kid: string | undefined): VerifiedAccessToken {
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
      throw new InvalidToken("token_malformed", `The token's payload is not a JSON object. ${SEND_UNCHANGED}`);
    }
    // The merchant's scenario says how its tokens are written (which claims, typ, issuer); a token
    // that names none is judged by the sandbox's own format and settings.
    const merchant = this.merchantOf(payload);
    const owner = merchant && this.scopeOf(merchant);
    const format = owner?.tokenFormat ?? this.format;
    const settings = owner?.settings ?? this.settings;
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
    const loginToken = header.typ === LOGIN_TOKEN_TYP && (format.typ !== LOGIN_TOKEN_TYP || payload.client_id === undefined);
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
    const expiredEarlyAt = this.ledger.expiredEarlyAt(claims.jti, merchant.id, claims.iat);
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
    if (this.ledger.isRevoked(claims.jti, merchant.id, claims.iat)) {
      throw new InvalidToken("token_revoked", `The access token was revoked. ${RENEW_HINT}`);
    }
    // The login's token carries roles, not scopes: it has the rights of its merchant, as a
    // Symfony session of that user has on the API's other firewalled routes.
    if (loginToken) return { merchant, claims, scopes: new Set(merchant.scopes), loginToken };
    const scopes = new Set(typeof claims.scope === "string" ? claims.scope.split(" ") : []);
    return { merchant, claims, scopes, loginToken };
  }

  private explain(e: unknown): InvalidToken {
    if (e instanceof joseErrors.JWSSignatureVerificationFailed) {
      return new InvalidToken(
        "token_signature_invalid",
        `The token's signature does not verify: it was altered after it was issued, or signed with another key. ${RENEW_HINT}`,
      );
    }
    if (e instanceof joseErrors.JOSENotSupported) {
      return new InvalidToken(
        "token_unsupported",
        `The token uses a header or feature this API does not support (e.g. an unknown 'crit' entry). ${RENEW_HINT}`,
      );
    }
    return new InvalidToken("token_malformed", `The token is not a well-formed signed JWT. ${SEND_UNCHANGED}`);
  }
}

const REQUIRED_CLAIMS: Array<[string, "string" | "number"]> = [
  ["iss", "string"],
  ["aud", "string"],
  ["sub", "string"],
  ["exp", "number"],
  ["iat", "number"],
  ["jti", "string"],
];

/** A token whose signature verified: its header, its claims, and the key that verified it. */
interface Verified {
  header: ProtectedHeaderParameters;
  payload: JWTPayload;
  kid: string;
}

const PART_NAMES = ["header", "payload", "signature"] as const;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * One token, one text. base64url's last character may carry bits past the end of the data
 * (2 or 4 of them), which decoders ignore, so several texts decode to the same bytes; TextDecoder
 * silently drops a UTF-8 byte order mark before the JSON (which RFC 8259 §8.1 forbids in JSON sent
 * over a network); and an ECDSA signature (r, s) verifies as (r, n − s) too (ecdsa.ts). All are
 * refused, so a token the sandbox accepts is the exact text it issued.
 */
function assertOneText(token: string, alg: string): void {
  const parts = token.split(".");
  for (const [i, part] of parts.entries()) {
    const bytes = Buffer.from(part, "base64url");
    if (bytes.toString("base64url") !== part) {
      throw new InvalidToken(
        "token_malformed",
        `The token's ${PART_NAMES[i]} is not canonical base64url: its last character carries bits past the end of the data, so it is another text of the token. ${SEND_UNCHANGED}`,
      );
    }
    if (i < 2 && UTF8_BOM.every((b, j) => bytes[j] === b)) {
      throw new InvalidToken(
        "token_malformed",
        `The token's ${PART_NAMES[i]} JSON starts with a byte order mark (UTF-8 BOM), which JSON in a JWT may not have. ${SEND_UNCHANGED}`,
      );
    }
  }
  if (alg === "ES256" && isHighS(Buffer.from(parts[2]!, "base64url"))) {
    throw new InvalidToken(
      "token_signature_invalid",
      `The token's ES256 signature is in its high-S form (S above half the curve order): a second text of a signature, which this API refuses so that a token has one text only. ${SEND_UNCHANGED}`,
    );
  }
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return String(value);
  return typeof value === "string" ? `a string ('${echo(value, 64)}')` : typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function unknownMerchant(): InvalidToken {
  return new InvalidToken("token_unknown_merchant", `The token's subject is not a merchant of this sandbox. ${RENEW_HINT}`);
}

function unknownKid(kid: string): InvalidToken {
  return new InvalidToken(
    "token_unknown_kid",
    `The token's signing key (kid '${echo(kid, 64)}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`,
  );
}
