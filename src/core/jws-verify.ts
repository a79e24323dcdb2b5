import { createHmac, createSecretKey, KeyObject, timingSafeEqual, verify, type webcrypto } from "node:crypto";
import { errors as joseErrors, type ProtectedHeaderParameters } from "jose";
import type { SigningKey } from "./keys.js";

/**
 * Checks the signature of a compact JWS (RFC 7515 §7.1) with node:crypto and returns its payload
 * bytes. This is the cost of a protected call whose token was not verified before: jose's
 * compactVerify, through WebCrypto's promise-and-job machinery, costs two to three times node's
 * verify on a KeyObject (docs/performance.md#verifying). RS256 and ES256 verify on libuv's thread
 * pool (node's callback form of `verify`), as they sign (jws.ts): the event loop goes on with HTTP
 * meanwhile. HS256 stays inline: the hand-off would cost more than the HMAC.
 *
 * It refuses exactly what jose's compactVerify refuses, in the same order and with jose's own
 * error classes (the caller maps them to refusals): a `crit` that is not an array of non-empty
 * names, or names a parameter it lacks, is JWSInvalid; one naming anything but `b64` is
 * JOSENotSupported; `b64` must then be a boolean (false: the payload is the text as sent); a
 * non-string `alg`, or a part whose length no base64url text has, is JWSInvalid; a signature that
 * does not verify is JWSSignatureVerificationFailed. test/unit/jws-verify.test.ts holds it to jose.
 *
 * The caller has checked the token's shape (three parts of base64url characters), parsed its
 * header, and matched `alg` against the key.
 */
export async function verifyCompactJws(token: string, header: ProtectedHeaderParameters, key: SigningKey, verifier: KeyObject): Promise<Uint8Array> {
  const b64 = criticalExtensions(header).includes("b64") ? b64Of(header) : true;
  if (typeof header.alg !== "string" || header.alg === "")
    throw new joseErrors.JWSInvalid('JWS "alg" (Algorithm) Header Parameter missing or invalid');
  const firstDot = token.indexOf(".");
  const lastDot = token.lastIndexOf(".");
  const signatureText = token.slice(lastDot + 1);
  if (!decodable(signatureText)) throw new joseErrors.JWSInvalid("Failed to base64url decode the signature");
  // Only base64url characters before the signature: their bytes are their latin1 codes.
  const input = Buffer.from(token.slice(0, lastDot), "latin1");
  let verified: boolean;
  try {
    verified = await signatureVerifies(key.alg, input, Buffer.from(signatureText, "base64url"), verifier);
  } catch (cause) {
    throw new joseErrors.JWSSignatureVerificationFailed(undefined, { cause });
  }
  if (!verified) throw new joseErrors.JWSSignatureVerificationFailed();
  const payloadText = token.slice(firstDot + 1, lastDot);
  if (!b64) return Buffer.from(payloadText, "latin1");
  if (!decodable(payloadText)) throw new joseErrors.JWSInvalid("Failed to base64url decode the payload");
  return Buffer.from(payloadText, "base64url");
}

/** The key as node:crypto verifies with it: made once per key by the caller, never per request. */
export function verifierOf(key: SigningKey): KeyObject {
  const k = key.verifyKey;
  return k instanceof Uint8Array ? createSecretKey(k) : KeyObject.from(k as unknown as webcrypto.CryptoKey);
}

function signatureVerifies(alg: SigningKey["alg"], input: Buffer, signature: Buffer, verifier: KeyObject): boolean | Promise<boolean> {
  if (alg === "HS256") {
    const expected = createHmac("sha256", verifier).update(input).digest();
    return expected.length === signature.length && timingSafeEqual(expected, signature);
  }
  // ES256 signatures in a JWS are r || s (RFC 7518 §3.4), as WebCrypto reads them.
  const key = alg === "ES256" ? { key: verifier, dsaEncoding: "ieee-p1363" as const } : verifier;
  return new Promise((resolve, reject) => verify("sha256", input, key, signature, (err, ok) => (err ? reject(err) : resolve(ok))));
}

/** base64url text of any length but 4n+1, which no bytes encode to (WHATWG forgiving-base64, as jose decodes). */
function decodable(text: string): boolean {
  return text.length % 4 !== 1;
}

/** The `crit` names (RFC 7515 §4.1.11), as jose's validateCrit checks them: only `b64` is understood. */
function criticalExtensions(header: ProtectedHeaderParameters): readonly unknown[] {
  const crit: unknown = header.crit;
  if (crit === undefined) return [];
  if (!Array.isArray(crit) || crit.length === 0 || crit.some((name) => typeof name !== "string" || name.length === 0)) {
    throw new joseErrors.JWSInvalid('"crit" (Critical) Header Parameter MUST be an array of non-empty strings when present');
  }
  for (const name of crit as string[]) {
    if (name !== "b64") throw new joseErrors.JOSENotSupported(`Extension Header Parameter "${name}" is not recognized`);
    if (!Object.hasOwn(header, name) || header[name] === undefined)
      throw new joseErrors.JWSInvalid(`Extension Header Parameter "${name}" is missing`);
  }
  return crit;
}

function b64Of(header: ProtectedHeaderParameters): boolean {
  if (typeof header.b64 !== "boolean") throw new joseErrors.JWSInvalid('The "b64" (base64url-encode payload) Header Parameter must be a boolean');
  return header.b64;
}
