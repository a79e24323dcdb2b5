import { compactVerify, decodeJwt, decodeProtectedHeader } from "jose";
import { isLoginToken } from "../core/token-format.js";
import { jwsSpans } from "../core/jwt-runs.js";
import type { VerifyingKey } from "../core/keys.js";
import { SECRET_KINDS, type SecretFingerprints } from "../core/secret-fingerprints.js";

/**
 * Scanning log text for this sandbox's secrets in clear (POST /__sandbox/scan). Two sources:
 *
 * - the secrets of every merchant the sandbox has known since it started (api_secret, including
 *   rotated ones, merchant payment token, login password), by their fingerprints
 *   (core/secret-fingerprints.ts): those of ended sessions too, which is when CI scans its logs;
 * - JWT-shaped strings whose signature verifies with a key the sandbox made, in its ring or retired
 *   (a rotated-out key, a key of an ended session): tokens this sandbox issued (access tokens, login
 *   tokens, minted ones), expired or not. Nothing has to be stored to find them: the signature proves
 *   where they came from.
 *
 * A JWT-shaped string that no such key verifies is listed apart (`unverified`): after a restart the
 * sandbox knows none of the keys that signed the tokens of a log written before it, so the scan
 * cannot say whether it is a leak of ours; it says where, for a human to look.
 *
 * A hit says where (1-based line and column, the column counted in characters) and what kind, and
 * whose; never the secret itself.
 */

export const SCAN_KINDS = [...SECRET_KINDS, "access_token", "login_token"] as const;
export type ScanKind = (typeof SCAN_KINDS)[number];

export interface ScanHit {
  line: number;
  column: number;
  kind: ScanKind;
  /** The merchant id: the owner of the secret, or the `sub` of the token ("unknown" if it has none). */
  merchant: string;
}

/** Where a JWT-shaped string stands that no key of this sandbox verifies; `length` in characters, for a client that cut the text. */
export interface UnverifiedJwt {
  line: number;
  column: number;
  length: number;
}

export interface ScanResult {
  hits: ScanHit[];
  unverified: UnverifiedJwt[];
}

/** Where a JWT's keys come from: the sandbox's key ring and its retired keys, by `kid`. */
export type KeyLookup = (kid: string) => VerifyingKey | undefined;
/**
 * A token without a kid (a profile's `kid: false`): the merchant whose scenario's keys verify it
 * (the token service's own check, AccessTokens.provenSubject), or undefined.
 */
export type KidlessLookup = (token: string) => Promise<string | undefined>;

/** What a scan asks the sandbox about the JWTs it finds. */
export interface TokenLookups {
  findKey: KeyLookup;
  kidless?: KidlessLookup;
  /** The names access tokens carry their client under (client_id, and the profiles' clientClaim): tells the login's token apart. */
  clientClaims: readonly string[];
}

export async function scanText(text: string, secrets: SecretFingerprints, tokens: TokenLookups): Promise<ScanResult> {
  const { findKey, kidless = async () => undefined } = tokens;
  const kindOf = (header: { typ?: unknown }, payload: unknown): ScanKind =>
    isLoginToken(header.typ, (payload ?? {}) as Record<string, unknown>, tokens.clientClaims) ? "login_token" : "access_token";
  // Hits are found by offset and placed on lines and columns at the end, in one pass over the text.
  const found: Array<{ offset: number; kind: ScanKind; merchant: string }> = [];
  const seen = new Set<string>();
  const add = (offset: number, kind: ScanKind, merchant: string) => {
    const key = `${offset}:${kind}:${merchant}`;
    if (seen.has(key)) return;
    seen.add(key);
    found.push({ offset, kind, merchant });
  };

  secrets.find(text, (offset, owner) => add(offset, owner.kind, owner.merchant));

  const verdicts = new Map<string, Promise<Omit<ScanHit, "line" | "column"> | undefined>>();
  const shapes: Array<{ offset: number; end: number; verdict: Promise<Omit<ScanHit, "line" | "column"> | undefined> }> = [];
  // A compact JWS whose header and payload are JSON objects (`eyJ` is base64url for `{"`), found
  // in one pass (jwt-runs.ts). The signature part may be empty (alg none); such a token never
  // verifies, but it is still looked at.
  for (const [start, end] of jwsSpans(text)) {
    const shape = text.slice(start, end);
    let verdict = verdicts.get(shape);
    if (!verdict) {
      verdict = issuedBySandbox(shape, findKey, kidless, kindOf);
      verdicts.set(shape, verdict);
    }
    shapes.push({ offset: start, end, verdict });
  }
  const unknown: Array<{ offset: number; length: number }> = [];
  for (const { offset, end, verdict } of shapes) {
    const issued = await verdict;
    if (issued) add(offset, issued.kind, issued.merchant);
    else unknown.push({ offset, length: end - offset });
  }

  found.sort((a, b) => a.offset - b.offset || a.kind.localeCompare(b.kind) || a.merchant.localeCompare(b.merchant));
  const position = positions(text);
  const hits = found.map(({ offset, kind, merchant }) => ({ ...position(offset), kind, merchant }));
  // A second walk for the unverified ones (positions() goes forward only); both lists are in offset order.
  const placeUnknown = positions(text);
  return { hits, unverified: unknown.map(({ offset, length }) => ({ ...placeUnknown(offset), length })) };
}

/**
 * The kind and owner of a token this sandbox signed, or undefined. Only the signature counts: an
 * expired, revoked or wrong-audience token the sandbox signed is still a secret in a log. The key
 * comes from the sandbox's own ring by `kid`, and the algorithm from that key, never the token.
 */
async function issuedBySandbox(
  token: string,
  findKey: KeyLookup,
  kidless: KidlessLookup,
  kindOf: (header: { typ?: unknown }, payload: unknown) => ScanKind,
): Promise<Omit<ScanHit, "line" | "column"> | undefined> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return undefined;
  }
  if (typeof header.kid !== "string") {
    // Exact tokens only: without a key named, the glued-characters trim below has no length to go by.
    const merchant = await kidless(token);
    return merchant === undefined ? undefined : { kind: kindOf(header, decodeJwt(token)), merchant };
  }
  const key = findKey(header.kid);
  if (!key || header.alg !== key.alg) return undefined;
  // A token glued to more base64url characters in the log ("…sigXYZ"): the signature of this key
  // has a fixed length, so the rest is not part of it.
  const [h, p, sig] = token.split(".") as [string, string, string];
  const length = signatureChars(key);
  if (length !== undefined && sig.length < length) return undefined;
  let payload: unknown;
  try {
    const verified = await compactVerify(`${h}.${p}.${length === undefined ? sig : sig.slice(0, length)}`, key.verifyKey, { algorithms: [key.alg] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    return undefined;
  }
  const sub = (payload as { sub?: unknown } | null)?.sub;
  return {
    kind: kindOf(header, payload),
    merchant: typeof sub === "string" && sub !== "" ? sub : "unknown",
  };
}

/** The base64url length of the key's signatures (unpadded), when it is fixed and known. */
function signatureChars(key: VerifyingKey): number | undefined {
  const bytes = key.alg === "HS256" ? 32 : key.alg === "ES256" ? 64 : key.publicJwk?.n ? Buffer.from(key.publicJwk.n, "base64url").length : undefined;
  return bytes === undefined ? undefined : Math.ceil((bytes * 8) / 6);
}

/**
 * Offset → 1-based line and column, for offsets asked in increasing order: it walks on from the
 * previous offset, so placing every hit costs one pass over the text, however long a line is
 * (counting each column from its line's start was quadratic on one long line of secrets). Lines end
 * at "\n" (a "\r" before it is just a character at the end of the line); columns count characters
 * (code points), as editors do.
 */
function positions(text: string): (offset: number) => { line: number; column: number } {
  let at = 0;
  let line = 1;
  let column = 1;
  let lineStart = 0;
  return (offset) => {
    for (; at < offset; at++) {
      const c = text.charCodeAt(at);
      if (c === 10) {
        line++;
        column = 1;
        lineStart = at + 1;
        continue;
      }
      // The second half of a surrogate pair is not a character of its own.
      if (c >= 0xdc00 && c <= 0xdfff && at > lineStart && isHighSurrogate(text.charCodeAt(at - 1))) continue;
      column++;
    }
    return { line, column };
  };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
