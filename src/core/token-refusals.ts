import { SEND_UNCHANGED } from "./token-text.js";
import { errors as joseErrors } from "jose";
import { echo } from "./echo.js";
import { InvalidToken } from "./errors.js";

/** The refusals of a bearer token that more than one step of its verification makes. */

export const RENEW_HINT = "Request a new access token from POST /api/v2/auth/token.";

/** What jose's error (or none) says is wrong with a token, as the refusal that tells the client. */
export function explainTokenError(e: unknown): InvalidToken {
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

export function unknownMerchant(): InvalidToken {
  return new InvalidToken("token_unknown_merchant", `The token's subject is not a merchant of this sandbox. ${RENEW_HINT}`);
}

export function unknownKid(kid: string): InvalidToken {
  return new InvalidToken(
    "token_unknown_kid",
    `The token's signing key (kid '${echo(kid, 64)}') is not one of this sandbox's keys: the key was rotated, or the token comes from another sandbox or environment. ${RENEW_HINT}`,
  );
}
