import { createHash } from "node:crypto";
import { headOf, type SecretSet, type SecretView } from "./secret-index.js";

/**
 * Redaction for anything secret (api_secret, passwords, payment tokens, JWTs) that has to be
 * mentioned in a log line, the journal or an error message: the first 4 characters, the length
 * and a short hash, so two values can be told apart without either being readable.
 */
export function redact(secret: string): string {
  const hash = createHash("sha256").update(secret).digest("hex").slice(0, 8);
  const head = secret.length > 12 ? secret.slice(0, 4) : "";
  return `${head}...(${secret.length} chars, sha256:${hash})`;
}

/** Query parameter names that carry a bearer token (refused on protected endpoints, see bearer.ts). */
export const TOKEN_QUERY_KEYS: readonly string[] = ["access_token", "token", "jwt", "bearer"];

/** A query parameter whose name says it is secret (accessToken, client_secret, id_token …) has its value redacted whatever it is. */
const SECRET_NAME = /(token|secret|passw|pwd|auth|jwt|credential|bearer)/i;
/**
 * A JWT anywhere in a text (after `Bearer `, `t=`, before `,` or `;v=1`): `eyJ` (a JSON header in
 * base64url), then one or two dots. The payload must not be empty, so a redaction's own head
 * (`eyJh...(`) is not taken for a token.
 */
const JWT_RUN = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g;
/** The same, without the g flag: a yes/no test that keeps no lastIndex between calls. */
const JWT_TEST = new RegExp(JWT_RUN.source);
/** How many rounds of percent-decoding are tried: double encoding, and one more. */
const MAX_DECODINGS = 3;

/** The path and query of a request as the log, the journal and every answer may show them. */
export interface ShownUrl {
  path: string;
  query: string;
}

/**
 * The one redaction of a request's URL. Every JWT-shaped run and every secret of a loaded merchant
 * (SecretIndex) is replaced by its redaction wherever it sits in the path or query, in clear or
 * percent-encoded (once, twice, `+` for space, any hex case); query parameters named like secrets
 * have their value redacted. A part with nothing to hide is returned as it came, so the common case
 * costs a scan of a short string.
 */
export function redactUrl(path: string, query: string, secrets: SecretView): ShownUrl {
  return { path: redactPart(path, "/", secrets), query: query ? redactPart(query, "&", secrets) : "" };
}

function redactPart(raw: string, separator: "/" | "&", secrets: SecretView): string {
  const variants = variantsOf(raw);
  // Short secrets and secret-named parameters are a matter of whole units; anything else shows in the whole part.
  const byUnit = secrets.short.size > 0 || (separator === "&" && variants.some((v) => SECRET_NAME.test(v)));
  if (!byUnit && !variants.some((v) => hasSecret(v, secrets, false))) return raw;
  const shown = raw
    .split(separator)
    .map((unit) => (separator === "&" ? redactPair(unit, secrets) : redactUnit(unit, secrets)))
    .join(separator);
  // A secret that spans units (a password with '/' or '&' in it) is still there: hide the whole part.
  return variantsOf(shown).some((v) => hasSecret(v, secrets, false)) ? redact(deepest(raw)) : shown;
}

/**
 * One value read from the URL (a decoded path parameter, a query key) for a message that names it:
 * redacted like the URL it came from. Shorten it after this, never before: a cut secret is not found.
 */
export function redactValue(value: string, secrets: SecretView): string {
  const shown = redactUnit(value, secrets);
  return variantsOf(shown).some((v) => hasSecret(v, secrets, false)) ? redact(deepest(value)) : shown;
}

function redactPair(pair: string, secrets: SecretView): string {
  const eq = pair.indexOf("=");
  if (eq < 0) return redactUnit(pair, secrets);
  const key = pair.slice(0, eq);
  const value = pair.slice(eq + 1);
  if (variantsOf(key).some((k) => SECRET_NAME.test(k))) return `${redactUnit(key, secrets)}=${redact(formDecode(value))}`;
  return `${redactUnit(key, secrets)}=${redactUnit(value, secrets)}`;
}

/** One path segment, query key or value: the most decoded form a secret was found in, each secret redacted. */
function redactUnit(unit: string, secrets: SecretView): string {
  let found: { text: string; spans: Array<[number, number]> } | undefined;
  for (const v of variantsOf(unit)) {
    const spans = secretSpans(v, secrets, true);
    if (spans.length) found = { text: v, spans };
  }
  if (!found) return unit;
  let out = "";
  let at = 0;
  for (const [start, end] of found.spans) {
    out += found.text.slice(at, start) + redact(found.text.slice(start, end));
    at = end;
  }
  return out + found.text.slice(at);
}

function hasSecret(text: string, secrets: SecretView, whole: boolean): boolean {
  // A JWT is the usual find, and its regex is cheaper than the lookups below.
  if (text.includes("eyJ") && JWT_TEST.test(text)) return true;
  return secretSpans(text, secrets, whole).length > 0;
}

/**
 * Where JWTs and secrets sit in a text, merged and in order. Secrets of URL-unreserved characters
 * are looked for only inside runs of those characters at least as long as the secret, so a path
 * such as /api/v2/payment/status costs no lookup at all; others (rare: a password with a space) are
 * looked for at every position, once per distinct length. Short secrets match the whole text only
 * (`whole`: the text is one segment, key or value).
 */
function secretSpans(text: string, secrets: SecretView, whole: boolean): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  // A JWT (hundreds of characters) is redacted whole: the word lookups need not walk through it.
  let scanned = text;
  if (text.includes("eyJ")) {
    for (const m of text.matchAll(JWT_RUN)) {
      spans.push([m.index, m.index + m[0].length]);
      scanned = scanned.slice(0, m.index) + " ".repeat(m[0].length) + scanned.slice(m.index + m[0].length);
    }
  }
  if (secrets.wordLengths.length) {
    let runStart = 0;
    for (let i = 0; i <= scanned.length; i++) {
      if (i < scanned.length && isUnreserved(scanned.charCodeAt(i))) continue;
      if (i - runStart >= secrets.wordLengths[0]!) lookUp(scanned, runStart, i, secrets.words, secrets.wordLengths, secrets.heads, spans);
      runStart = i + 1;
    }
  }
  if (secrets.otherLengths.length) lookUp(text, 0, text.length, secrets.others, secrets.otherLengths, secrets.heads, spans);
  if (whole && secrets.short.has(text)) spans.push([0, text.length]);
  return spans.length > 1 ? merged(spans) : spans;
}

/** Every secret of `set` inside text[from, to): a substring is cut only where the first two characters start some secret. */
function lookUp(
  text: string,
  from: number,
  to: number,
  set: SecretSet,
  lengths: readonly number[],
  heads: Uint8Array,
  spans: Array<[number, number]>,
): void {
  for (let p = from; p + lengths[0]! <= to; p++) {
    if (heads[headOf(text, p)] !== 1) continue;
    for (const length of lengths) {
      if (p + length > to) break;
      if (set.has(text.slice(p, p + length))) spans.push([p, p + length]);
    }
  }
}

/** [A-Za-z0-9._~-], the characters a URL carries unencoded. */
function isUnreserved(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 || c === 126;
}

function merged(spans: Array<[number, number]>): Array<[number, number]> {
  spans.sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [spans[0]!];
  for (const [start, end] of spans.slice(1)) {
    const last = out[out.length - 1]!;
    if (start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/**
 * The text as sent and as it reads after up to MAX_DECODINGS rounds of percent-decoding, with `+`
 * taken literally and as a space (form encoding). Without '%' or '+' that is the text alone.
 */
function variantsOf(text: string): string[] {
  if (!text.includes("%") && !text.includes("+")) return [text];
  const out = new Set([text]);
  // '+' may turn up only after a decoding (%2B): the form-encoded chain turns it into a space at every round.
  for (const plusIsSpace of [false, true]) {
    let v = text;
    for (let round = 0; round < MAX_DECODINGS; round++) {
      const next = lenientDecode(plusIsSpace ? v.replace(/\+/g, " ") : v);
      if (next === v) break;
      out.add(next);
      v = next;
    }
  }
  return [...out];
}

/** A query value as a form decoder reads it ('+' as space), or as sent when it does not decode. */
function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

/** The most decoded form of a text ('+' as space): what a redaction of the whole of it hides. */
function deepest(text: string): string {
  const all = variantsOf(text);
  return all[all.length - 1]!;
}

const UTF8 = new TextDecoder();

/** Decodes every run of %XX; a broken escape elsewhere does not stop the rest from being decoded. */
function lenientDecode(text: string): string {
  if (!text.includes("%")) return text;
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return UTF8.decode(Uint8Array.from(run.slice(1).split("%"), (h) => parseInt(h, 16)));
    }
  });
}
