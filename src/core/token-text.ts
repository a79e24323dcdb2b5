import { compactForm } from "./jwt-runs.js";
import { decodeProtectedHeader, type ProtectedHeaderParameters } from "jose";
import { isHighS } from "./ecdsa.js";
import { InvalidToken } from "./errors.js";

/**
 * A bearer token's text, before anything it says is used: its form (a JWS of three base64url parts
 * with a JSON header, not a JWE) and, once its signature verified, that it is the one text the
 * sandbox issued (assertOneText).
 */

/** The fix of every refusal of a token that is not the text issued: the one sentence for it. */
export const SEND_UNCHANGED = "Send the access_token value from POST /api/v2/auth/token unchanged.";
const PART_NAMES = ["header", "payload", "signature"] as const;
const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** The protected header of a compact JWS; an InvalidToken saying what the text is instead. */
export function decodeTokenHeader(token: string): ProtectedHeaderParameters {
  const form = compactForm(token);
  if (form === "jwe") {
    throw new InvalidToken(
      "token_encrypted",
      `The token is an encrypted JWT (JWE); this API accepts only the signed access token (JWS) from POST /api/v2/auth/token.`,
    );
  }
  if (form !== "jws") {
    throw new InvalidToken("token_malformed", `The bearer token is not a JWT (expected three base64url parts separated by dots). ${SEND_UNCHANGED}`);
  }
  try {
    return decodeProtectedHeader(token);
  } catch {
    throw new InvalidToken("token_malformed", `The token's header is not valid base64url-encoded JSON. ${SEND_UNCHANGED}`);
  }
}

/**
 * One token, one text. base64url's last character may carry bits past the end of the data
 * (2 or 4 of them), which decoders ignore, so several texts decode to the same bytes; TextDecoder
 * silently drops a UTF-8 byte order mark before the JSON (which RFC 8259 §8.1 forbids in JSON sent
 * over a network); and an ECDSA signature (r, s) verifies as (r, n − s) too (ecdsa.ts). All are
 * refused, so a token the sandbox accepts is the exact text it issued.
 */
export function assertOneText(token: string, alg: string): void {
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
