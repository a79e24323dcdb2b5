import { createHmac, sign } from "node:crypto";
import { toLowS } from "./ecdsa.js";
import type { SigningKey } from "./keys.js";

/**
 * Signs a JWS in compact serialization (RFC 7515 §7.1) with node:crypto directly. This is the one
 * place the sandbox signs its own tokens, and it is the hot path of the token exchange: jose's
 * SignJWT, through WebCrypto's promise-and-job machinery, costs several times the signature's CPU.
 * Verification is jws-verify.ts (node:crypto too, with jose's rejections, checked against jose
 * token by token in its tests); tests verify every token this makes with jose.
 *
 * Where each algorithm signs (why: docs/performance.md#signing):
 * - RS256 on libuv's thread pool, through node's callback form of `sign`, so signatures use every
 *   core while the event loop does HTTP; a worker_threads pool did no better.
 * - ES256 on the thread pool too: over HTTP the event loop is the limit, not the machine's CPU.
 * - HS256 inline, on the event loop: the hand-off would cost more than the HMAC.
 */
export function signCompactJws(header: JwsHeader, payload: object, key: SigningKey): Promise<string> {
  return signWithEncodedHeader(encodeJwsHeader(header), payload, key);
}

/** The protected header of the sandbox's JWS. */
export interface JwsHeader {
  alg: SigningKey["alg"];
  /** Absent under a profile with `kid: false` (token-format.ts). */
  kid?: string;
  /** Absent under a profile with `typ: none`. */
  typ?: string;
}

/** A header as it is written into the token (base64url of its JSON): see `signWithEncodedHeader`. */
export function encodeJwsHeader(header: JwsHeader): string {
  return base64url(header);
}

/**
 * `signCompactJws` with the header already encoded (`encodeJwsHeader`): the token exchange writes
 * the same header for every token of a key, so it encodes it once per key.
 */
export function signWithEncodedHeader(encodedHeader: string, payload: object, key: SigningKey): Promise<string> {
  const input = `${encodedHeader}.${base64url(payload)}`;
  if (key.alg === "HS256") return Promise.resolve(`${input}.${createHmac("sha256", key.signer).update(input).digest("base64url")}`);
  // ES256 signatures in a JWS are r || s (RFC 7518 §3.4), not the DER node gives by default, and
  // in their low-S form: verification refuses the other (ecdsa.ts).
  const es256 = key.alg === "ES256";
  return new Promise((resolve, reject) => {
    // With a callback, node signs on libuv's thread pool, as WebCrypto does, off the event loop.
    sign("sha256", Buffer.from(input), es256 ? { key: key.signer, dsaEncoding: "ieee-p1363" } : key.signer, (err, signature) =>
      err ? reject(err) : resolve(`${input}.${(es256 ? toLowS(signature) : signature).toString("base64url")}`),
    );
  });
}

/**
 * An unsecured JWS (RFC 7515 §A.5: `alg` "none", empty signature). The sandbox refuses such tokens;
 * the control plane mints them so a client can check that it refuses them too.
 */
export function unsecuredCompactJws(header: { alg: "none"; kid?: string; typ?: string }, payload: object): string {
  return `${base64url(header)}.${base64url(payload)}.`;
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}
