/**
 * ES256 signatures in their one canonical form. An ECDSA signature (r, s) verifies equally as
 * (r, n − s), so every signature has a second text; OpenSSL (and so node and jose) accepts both.
 * The sandbox makes and accepts only the low-S form (s ≤ n/2, as Bitcoin's BIP 62 and libsecp256k1
 * do), so one token has one text: the same token twice is the same string, for the verified-token
 * cache, for the journal and for clients that compare tokens.
 */

/** The order n of the P-256 group (SEC 2 §2.4.2). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_ORDER = P256_ORDER >> 1n;
const COORDINATE_BYTES = 32;

/** True for a 64-byte r || s signature whose s is in the upper half of the group order. */
export function isHighS(signature: Uint8Array): boolean {
  if (signature.length !== 2 * COORDINATE_BYTES) return false;
  return bigIntOf(signature.subarray(COORDINATE_BYTES)) > HALF_ORDER;
}

/** The low-S form of a 64-byte r || s signature (itself when it already is). */
export function toLowS(signature: Buffer): Buffer {
  if (!isHighS(signature)) return signature;
  const s = P256_ORDER - bigIntOf(signature.subarray(COORDINATE_BYTES));
  const out = Buffer.from(signature);
  out.set(Buffer.from(s.toString(16).padStart(2 * COORDINATE_BYTES, "0"), "hex"), COORDINATE_BYTES);
  return out;
}

function bigIntOf(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`);
}
