import { compactVerify, decodeJwt, decodeProtectedHeader } from "jose";
import { LOGIN_TOKEN_TYP } from "../core/access-tokens.js";
import { jwsSpans } from "../core/jwt-runs.js";
import type { SigningKey } from "../core/keys.js";
import type { Merchant } from "../core/merchants.js";

/**
 * Scanning log text for this sandbox's secrets in clear (POST /__sandbox/scan). Two sources:
 *
 * - the secrets of every merchant the sandbox knows right now (api_secret, merchant payment token,
 *   login password), found as plain substrings;
 * - JWT-shaped strings whose signature verifies with one of the sandbox's own keys: tokens this
 *   sandbox issued (access tokens, login tokens, minted ones), expired or not. Nothing has to be
 *   stored to find them: the signature proves where they came from.
 *
 * A hit says where (1-based line and column, the column counted in characters) and what kind, and
 * whose; never the secret itself.
 */

export const SCAN_KINDS = ["api_secret", "payment_token", "password", "access_token", "login_token"] as const;
export type ScanKind = (typeof SCAN_KINDS)[number];

export interface ScanHit {
  line: number;
  column: number;
  kind: ScanKind;
  /** The merchant id: the owner of the secret, or the `sub` of the token ("unknown" if it has none). */
  merchant: string;
}

/**
 * Secrets shorter than this are not searched for: a one-letter password would "leak" in every
 * line. Every generated and published sandbox secret is far longer.
 */
export const MIN_SECRET_LENGTH = 6;

/** Up to this many distinct secrets, one indexOf per secret is fastest; beyond, one indexed pass. */
const FEW_SECRETS = 300;

/** Where a JWT's keys come from: the sandbox's key ring, by `kid`. */
export type KeyLookup = (kid: string) => SigningKey | undefined;
/**
 * A token without a kid (a profile's `kid: false`): the merchant whose scenario's keys verify it
 * (the token service's own check, AccessTokens.provenSubject), or undefined.
 */
export type KidlessLookup = (token: string) => Promise<string | undefined>;

export async function scanText(
  text: string,
  merchants: readonly Merchant[],
  findKey: KeyLookup,
  kidless: KidlessLookup = async () => undefined,
): Promise<ScanHit[]> {
  // Hits are found by offset and placed on lines and columns at the end, in one pass over the text.
  const found: Array<{ offset: number; kind: ScanKind; merchant: string }> = [];
  const seen = new Set<string>();
  const add = (offset: number, kind: ScanKind, merchant: string) => {
    const key = `${offset}:${kind}:${merchant}`;
    if (seen.has(key)) return;
    seen.add(key);
    found.push({ offset, kind, merchant });
  };

  const secrets = secretIndex(merchants);
  if (secrets.size <= FEW_SECRETS) {
    for (const [secret, owners] of secrets) {
      for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
        for (const owner of owners) add(at, owner.kind, owner.merchant);
      }
    }
  } else {
    // Many sessions: one pass over the text, looking each position's first characters up.
    const byPrefix = new Map<string, string[]>();
    for (const secret of secrets.keys()) {
      const prefix = secret.slice(0, MIN_SECRET_LENGTH);
      const list = byPrefix.get(prefix);
      if (list) list.push(secret);
      else byPrefix.set(prefix, [secret]);
    }
    for (let at = 0; at + MIN_SECRET_LENGTH <= text.length; at++) {
      const candidates = byPrefix.get(text.slice(at, at + MIN_SECRET_LENGTH));
      if (!candidates) continue;
      for (const secret of candidates) {
        if (text.startsWith(secret, at)) for (const owner of secrets.get(secret)!) add(at, owner.kind, owner.merchant);
      }
    }
  }

  const verdicts = new Map<string, Promise<Omit<ScanHit, "line" | "column"> | undefined>>();
  const shapes: Array<{ offset: number; verdict: Promise<Omit<ScanHit, "line" | "column"> | undefined> }> = [];
  // A compact JWS whose header and payload are JSON objects (`eyJ` is base64url for `{"`), found
  // in one pass (jwt-runs.ts). The signature part may be empty (alg none); such a token never
  // verifies, but it is still looked at.
  for (const [start, end] of jwsSpans(text)) {
    const shape = text.slice(start, end);
    let verdict = verdicts.get(shape);
    if (!verdict) {
      verdict = issuedBySandbox(shape, findKey, kidless);
      verdicts.set(shape, verdict);
    }
    shapes.push({ offset: start, verdict });
  }
  for (const { offset, verdict } of shapes) {
    const issued = await verdict;
    if (issued) add(offset, issued.kind, issued.merchant);
  }

  found.sort((a, b) => a.offset - b.offset || a.kind.localeCompare(b.kind) || a.merchant.localeCompare(b.merchant));
  const position = positions(text);
  return found.map(({ offset, kind, merchant }) => ({ ...position(offset), kind, merchant }));
}

/** Each distinct secret, with every (kind, merchant) it belongs to. */
function secretIndex(merchants: readonly Merchant[]): Map<string, Array<{ kind: ScanKind; merchant: string }>> {
  const index = new Map<string, Array<{ kind: ScanKind; merchant: string }>>();
  const put = (secret: string | undefined, kind: ScanKind, merchant: string) => {
    if (!secret || secret.length < MIN_SECRET_LENGTH) return;
    const owners = index.get(secret) ?? [];
    if (!owners.some((o) => o.kind === kind && o.merchant === merchant)) owners.push({ kind, merchant });
    index.set(secret, owners);
  };
  for (const m of merchants) {
    put(m.apiSecret, "api_secret", m.id);
    put(m.paymentToken, "payment_token", m.id);
    put(m.login?.password, "password", m.id);
  }
  return index;
}

/**
 * The kind and owner of a token this sandbox signed, or undefined. Only the signature counts: an
 * expired, revoked or wrong-audience token the sandbox signed is still a secret in a log. The key
 * comes from the sandbox's own ring by `kid`, and the algorithm from that key, never the token.
 */
async function issuedBySandbox(token: string, findKey: KeyLookup, kidless: KidlessLookup): Promise<Omit<ScanHit, "line" | "column"> | undefined> {
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

/** The login's token: typ JWT without the client_id every access token carries (a profile may give access tokens typ JWT too). */
function kindOf(header: { typ?: unknown }, payload: unknown): ScanKind {
  return header.typ === LOGIN_TOKEN_TYP && (payload as { client_id?: unknown } | null)?.client_id === undefined ? "login_token" : "access_token";
}

/** The base64url length of the key's signatures (unpadded), when it is fixed and known. */
function signatureChars(key: SigningKey): number | undefined {
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
