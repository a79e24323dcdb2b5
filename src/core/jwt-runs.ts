/**
 * The one place that says what "looks like a JWT": a whole value (jwtShape) and where JWT-shaped
 * text sits in a longer text (a URL, a log: jwtSpans, jwsSpans). Each maximal run of base64url characters is read once: a regular
 * expression such as /eyJ[A-Za-z0-9_-]+\.…/g tries again at every `eyJ` of a run and reads on to
 * the run's end each time, so `eyJ` repeated thousands of times cost seconds (issue 23 §2). Every
 * `eyJ` of one run fails or succeeds for the same reason (what follows the run), so trying the
 * first one of each run finds exactly what the expression found.
 */

export type Span = [start: number, end: number];

/** [A-Za-z0-9_-], base64url's alphabet. */
function isBase64Url(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95;
}

/** The end of the run of base64url characters that starts at `from` (`from` itself when there is none). */
function runEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && isBase64Url(text.charCodeAt(i))) i++;
  return i;
}

/** The first `eyJ` (base64url for `{"`) in text[from, to), or -1. */
function firstHead(text: string, from: number, to: number): number {
  for (let i = from; i + 3 <= to; i++) {
    if (text.charCodeAt(i) === 101 && text.charCodeAt(i + 1) === 121 && text.charCodeAt(i + 2) === 74) return i;
  }
  return -1;
}

const DOT = 46;

/**
 * Every span a token shape finds, reading each maximal base64url run once. `endOf` is given the
 * first `eyJ` of a run and the run's end, and answers where the token that starts there ends, or
 * -1 (then no later `eyJ` of the run starts one either). `first`: stop at the first span.
 */
function spansOf(text: string, endOf: (text: string, head: number, runEnd: number) => number, first: boolean): Span[] {
  const spans: Span[] = [];
  for (let at = 0; at < text.length; ) {
    const end = runEnd(text, at);
    if (end === at) {
      at++;
      continue;
    }
    const head = firstHead(text, at, end);
    const stop = head < 0 ? -1 : endOf(text, head, end);
    if (stop < 0) {
      at = end;
      continue;
    }
    spans.push([head, stop]);
    if (first) break;
    at = stop;
  }
  return spans;
}

/**
 * What the redaction hides: `eyJ` and at least one more character, a dot, a non-empty part, and
 * optionally a dot and a third part (`/eyJ[b64]+\.[b64]+(?:\.[b64]*)?/g`). The payload must not be
 * empty, so a redaction's own head (`eyJh...(`) is not taken for a token. `first`: stop at the
 * first span (a yes/no question).
 */
export function jwtSpans(text: string, first = false): Span[] {
  return spansOf(text, jwtEnd, first);
}

function jwtEnd(text: string, head: number, end: number): number {
  if (head + 3 >= end || text.charCodeAt(end) !== DOT) return -1;
  const payloadEnd = runEnd(text, end + 1);
  if (payloadEnd === end + 1) return -1;
  return text.charCodeAt(payloadEnd) === DOT ? runEnd(text, payloadEnd + 1) : payloadEnd;
}

/** True when the text holds a JWT-shaped run (jwtSpans). */
export function hasJwt(text: string): boolean {
  return text.includes("eyJ") && jwtSpans(text, true).length > 0;
}

/**
 * What the log scan verifies: a compact JWS whose header and payload both start `eyJ`, with a
 * signature part that may be empty: `eyJ[b64]*` `.eyJ[b64]*` `.[b64]*`, as a regular expression once did.
 */
export function jwsSpans(text: string): Span[] {
  return spansOf(text, jwsEnd, false);
}

function jwsEnd(text: string, _head: number, end: number): number {
  if (text.charCodeAt(end) !== DOT || !text.startsWith("eyJ", end + 1)) return -1;
  const payloadEnd = runEnd(text, end + 1);
  return text.charCodeAt(payloadEnd) === DOT ? runEnd(text, payloadEnd + 1) : -1;
}

/**
 * A whole text as a compact token, read once: "jws" for three base64url parts separated by dots
 * (the signature may be empty), "jwe" for five, else undefined. Its header is not read: the
 * verifier (token-text.ts, decodeTokenHeader) says what is wrong with one that is not JSON.
 */
export function compactForm(text: string): "jws" | "jwe" | undefined {
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === DOT) dots++;
    else if (!isBase64Url(c)) return undefined;
  }
  return dots === 2 ? "jws" : dots === 4 ? "jwe" : undefined;
}

/**
 * Whether a whole value is a JWT, and which kind: a compact JWS or JWE (compactForm) whose header
 * is a JSON object (`eyJ`, base64url for `{"`), so an opaque token with dots is not taken for one.
 * The one test of "is this a JWT" for a value (payment/init's teaching refusal, calibrate); it
 * trusts nothing (no signature, no claims).
 */
export function jwtShape(text: string): "jws" | "jwe" | undefined {
  return text.startsWith("eyJ") ? compactForm(text) : undefined;
}
