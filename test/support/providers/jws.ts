import { createHmac, generateKeyPair, type KeyObject, sign, timingSafeEqual, verify } from "node:crypto";

/**
 * Compact JWS as the fakes' libraries make them, with the header and claims bytes given by the
 * caller (member order and escaping are part of what a framework sends: lcobucci writes
 * `{"typ":"JWT","alg":"RS256"}`, Nimbus `{"alg":"RS256"}`), and parsing that tells the framework's
 * own failure cases apart. RS256 and HS256 only: what the three copied frameworks use by default.
 */
export type SigningKey = { alg: "RS256"; privateKey: KeyObject; publicKey: KeyObject } | { alg: "HS256"; secret: Buffer };

export async function rsaKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await new Promise<{ privateKey: KeyObject; publicKey: KeyObject }>((resolve, reject) =>
    generateKeyPair("rsa", { modulusLength: 2048 }, (e, pub, priv) => (e ? reject(e) : resolve({ privateKey: priv, publicKey: pub }))),
  );
  return { alg: "RS256", privateKey, publicKey };
}

export function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

export function signJws(headerJson: string, payloadJson: string, key: SigningKey): string {
  const input = `${b64url(headerJson)}.${b64url(payloadJson)}`;
  const signature =
    key.alg === "RS256" ? sign("sha256", Buffer.from(input), key.privateKey) : createHmac("sha256", key.secret).update(input).digest();
  return `${input}.${b64url(signature)}`;
}

export interface ParsedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

/** The three parts decoded, or why not (`segments`: not three parts; `json`: a part is not a JSON object). */
export function parseJws(token: string): ParsedJws | "segments" | "json" {
  const parts = token.split(".");
  if (parts.length !== 3) return "segments";
  const [h, p, s] = parts as [string, string, string];
  const object = (part: string): Record<string, unknown> | undefined => {
    if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
    try {
      const v = JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as unknown;
      return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  const header = object(h);
  const payload = object(p);
  if (!header || !payload || !/^[A-Za-z0-9_-]*$/.test(s)) return "json";
  return { header, payload, signingInput: `${h}.${p}`, signature: Buffer.from(s, "base64url") };
}

/** The signature checks out with this key and the header names the key's algorithm. */
export function verifiedWith(jws: ParsedJws, key: SigningKey): boolean {
  if (jws.header.alg !== key.alg) return false;
  if (key.alg === "RS256") return verify("sha256", Buffer.from(jws.signingInput), key.publicKey, jws.signature);
  const expected = createHmac("sha256", key.secret).update(jws.signingInput).digest();
  return expected.length === jws.signature.length && timingSafeEqual(expected, jws.signature);
}
