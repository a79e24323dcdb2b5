import { createHash } from "node:crypto";
import { hasJwt, jwtSpans, type Span } from "./jwt-runs.js";
import type { SecretView } from "./secret-index.js";

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

/** Whether a parameter, member or header name says its value is secret (accessToken, client_secret, x-api-secret …). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}
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
  let found: { text: string; spans: Span[] } | undefined;
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
  // A JWT is the usual find, and cheaper to rule out than the secrets.
  return hasJwt(text) || secretSpans(text, secrets, whole).length > 0;
}

/**
 * Where JWTs (jwt-runs.ts) and secrets sit in a text, merged and in order; every part of it is one
 * pass over the text, whatever the secrets. Secrets of URL-unreserved characters are looked for
 * only inside runs of those characters at least as long as the shortest of them, so a path such as
 * /api/v2/payment/status costs no automaton step at all; others (rare: a password with a space)
 * in the whole text. Short secrets match the whole text only (`whole`: the text is one segment,
 * key or value).
 */
function secretSpans(text: string, secrets: SecretView, whole: boolean): Span[] {
  const found: Span[][] = [];
  if (text.includes("eyJ")) found.push(jwtSpans(text));
  const runs = text.length >= secrets.minWordLength ? unreservedRuns(text, secrets.minWordLength) : [];
  for (const { level, visible } of secrets.layers) {
    if (runs.length > 0 && runs.some(([start, end]) => end - start >= level.minWordLength)) {
      const spans: Span[] = [];
      for (const [start, end] of runs) level.automata().words.findIn(text, start, end, visible, spans);
      found.push(spans);
    }
    if (level.hasOthers) {
      const spans: Span[] = [];
      level.automata().others.findIn(text, 0, text.length, visible, spans);
      found.push(spans);
    }
  }
  if (whole && secrets.short.has(text)) found.push([[0, text.length]]);
  if (found.length === 1) return found[0]!;
  const all = found.flat();
  return all.length > 1 ? merged(all) : all;
}

/** The runs of URL-unreserved characters at least `min` long: where a secret of those characters can stand. */
function unreservedRuns(text: string, min: number): Span[] {
  const runs: Span[] = [];
  let runStart = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && isUnreserved(text.charCodeAt(i))) continue;
    if (i - runStart >= min) runs.push([runStart, i]);
    runStart = i + 1;
  }
  return runs;
}

/** [A-Za-z0-9._~-], the characters a URL carries unencoded. */
function isUnreserved(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 || c === 126;
}

function merged(spans: Span[]): Span[] {
  spans.sort((a, b) => a[0] - b[0]);
  const out: Span[] = [[...spans[0]!]];
  for (let i = 1; i < spans.length; i++) {
    const [start, end] = spans[i]!;
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
