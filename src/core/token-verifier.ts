import { SEND_UNCHANGED } from "./token-text.js";
import type { KeyObject } from "node:crypto";
import { decodeJwt, errors as joseErrors, type JWTPayload, type ProtectedHeaderParameters } from "jose";
import { checkAccessClaims, type ClaimsJudge } from "./access-claims-check.js";
import type { SandboxSettings } from "./config.js";
import { echo } from "./echo.js";
import { InvalidToken } from "./errors.js";
import { verifierOf, verifyCompactJws } from "./jws-verify.js";
import type { KeyRing, SigningKey } from "./keys.js";
import type { Merchant, MerchantRegistry } from "./merchants.js";
import { merchantClaimValue, type TokenFormat } from "./token-format.js";
import type { TokenLedger } from "./token-ledger.js";
import { explainTokenError, RENEW_HINT, unknownKid, unknownMerchant } from "./token-refusals.js";
import type { MerchantScope, VerifiedAccessToken } from "./token-scope.js";
import { assertOneText, decodeTokenHeader } from "./token-text.js";

/**
 * Verifying the sandbox's JWTs. Nothing the token says about how to verify it is trusted: the key
 * comes from our own ring by `kid` and the algorithm from that key; `jku`, `x5u` and embedded `jwk`
 * headers are never followed. A token without a kid is verified with the keys its merchant's
 * scenario accepts, when that scenario's format says kid: false (verifiedWithoutKid). The claims
 * are then checked on the clock of the merchant's scenario (access-claims-check.ts).
 */
export class TokenVerifier implements ClaimsJudge {
  /**
   * Tokens whose signature this sandbox already checked, by their exact text. The same
   * string means the same signature, so a repeat skips the signature check (most of a protected
   * call's CPU); claims, time, revocation and key acceptance are still checked every time.
   * Bounded, oldest out first: an integration uses a handful of tokens at a time, and each entry
   * holds a whole token (~1 KB), so a small cap keeps memory flat under a token-exchange storm.
   */
  private readonly verifiedSignatures = new Map<string, Verified>();
  private static readonly MAX_VERIFIED = 1_000;
  /** Each key as node:crypto verifies with it (jws-verify.ts), made on its first use; gone with the key. */
  private readonly verifiers = new WeakMap<SigningKey, KeyObject>();
  private readonly utf8 = new TextDecoder();

  constructor(
    /** Sandbox-wide settings: for tokens that name no merchant of a scenario. */
    readonly settings: SandboxSettings,
    private readonly ring: KeyRing,
    private readonly merchants: MerchantRegistry,
    readonly ledger: TokenLedger,
    readonly scopeOf: (merchant: Merchant) => MerchantScope,
    /** The sandbox's own profile's format: for tokens that name no merchant of a scenario. */
    readonly format: TokenFormat,
    /** Some scenario's profile writes tokens without a kid (see verifiedWithoutKid). */
    private readonly issuedWithoutKid: () => boolean,
  ) {}

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
    return checkAccessClaims(this, header, payload, kid);
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
  merchantOf(payload: JWTPayload): Merchant | undefined {
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
    const header = decodeTokenHeader(token);
    if (typeof header.kid === "string" && this.ring.endedKid(header.kid)) this.refuseOfEndedScenario(token, header);
    const alg = String(header.alg);
    if (!this.ring.hasAlgorithm(alg)) {
      throw new InvalidToken(
        "token_algorithm_rejected",
        `The token's algorithm '${echo(alg, 80)}' is not accepted; this sandbox signs and accepts ${this.ring.algorithms().join(" and ")} only. ${SEND_UNCHANGED}`,
      );
    }
    const { key, bytes } =
      typeof header.kid === "string" ? await this.verifiedByKid(token, header, header.kid, alg) : await this.verifiedWithoutKid(token, header, alg);
    // After the signature: a token that fails it is refused for that, and only an otherwise
    // authentic token gets these refusals, which are about its text, not its origin.
    assertOneText(token, key.alg);
    let payload: JWTPayload;
    try {
      payload = JSON.parse(this.utf8.decode(bytes)) as JWTPayload;
    } catch (e) {
      throw explainTokenError(e);
    }
    const verified = { header, payload, kid: key.kid };
    this.remember(token, verified);
    return verified;
  }

  private async verifiedByKid(
    token: string,
    header: ProtectedHeaderParameters,
    kid: string,
    alg: string,
  ): Promise<{ key: SigningKey; bytes: Uint8Array }> {
    const key = this.ring.find(kid);
    if (!key) throw unknownKid(kid);
    if (key.alg !== alg) {
      throw new InvalidToken(
        "token_algorithm_rejected",
        `The token's algorithm '${echo(alg, 80)}' is not the algorithm of its key (${key.alg}). ${SEND_UNCHANGED}`,
      );
    }
    try {
      return { key, bytes: await verifyCompactJws(token, header, key, this.verifierOf(key)) };
    } catch (e) {
      throw explainTokenError(e);
    }
  }

  /**
   * A token without a kid, as a profile with `kid: false` writes them: verified with the keys its
   * merchant's scenario accepts, the signing key first, then the others newest first (one key
   * for most scenarios; more only while a rotation keeps old ones). The merchant is read from the
   * claims before the signature is checked, only to pick those keys: nothing else is trusted until
   * one verifies. A merchant whose scenario names its keys gets token_kid_missing, as before.
   */
  private async verifiedWithoutKid(token: string, header: ProtectedHeaderParameters, alg: string): Promise<{ key: SigningKey; bytes: Uint8Array }> {
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
      if (!merchant && (!this.format.kid || this.issuedWithoutKid())) {
        if (!claimed) throw explainTokenError(undefined);
        if (!this.format.kid) checkAccessClaims(this, header, claimed, undefined);
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
        return { key, bytes: await verifyCompactJws(token, header, key, this.verifierOf(key)) };
      } catch (e) {
        if (!(e instanceof joseErrors.JWSSignatureVerificationFailed)) throw explainTokenError(e);
      }
    }
    throw explainTokenError(new joseErrors.JWSSignatureVerificationFailed());
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
    checkAccessClaims(this, header, payload, String(header.kid));
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
    if (this.verifiedSignatures.size >= TokenVerifier.MAX_VERIFIED) {
      this.verifiedSignatures.delete(this.verifiedSignatures.keys().next().value!);
    }
    this.verifiedSignatures.set(token, verified);
  }
}

/** A token whose signature verified: its header, its claims, and the key that verified it. */
interface Verified {
  header: ProtectedHeaderParameters;
  payload: JWTPayload;
  kid: string;
}
