import { isObject } from "./json-paths.js";

/**
 * Taking calibrate's secrets out of what it writes or prints, in every form a provider may echo
 * them: as they are, percent-encoded (hex in either case, all of them or some characters only),
 * JSON-escaped (`\u006c`, `\/`, `\\` …, left in a string that held JSON text), and in base64 or
 * base64url, standing alone or inside a longer encoded text. One pass per text decodes the
 * percent and JSON escapes into a byte view that remembers where each byte came from, so a
 * secret found in the view is cut out of the original text; the base64 forms are found as they are.
 */

/** Secrets shorter than this are not searched for: replacing a 3-letter secret would mangle ordinary words. */
export const MIN_SECRET = 6;
export const REDACTION = "[redacted]";

export interface Scrubber {
  /** The text with every encoding of every secret replaced by "[redacted]". */
  scrub(text: string): string;
  /** Whether any encoding of any secret is in the text. */
  finds(text: string): boolean;
}

export function scrubber(secrets: readonly string[]): Scrubber {
  const usable = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET);
  // Each secret as UTF-8 bytes (one latin1 character a byte), to look for in the decoded view.
  const asBytes = usable.map((s) => Buffer.from(s, "utf8").toString("latin1"));
  const encoded = [...new Set(usable.flatMap(base64Forms))];
  const ranges = (text: string): Array<[number, number]> => {
    const found: Array<[number, number]> = [];
    const view = decodedView(text);
    for (const s of asBytes) {
      for (let at = view.bytes.indexOf(s); at >= 0; at = view.bytes.indexOf(s, at + s.length)) {
        found.push([view.start[at]!, view.end[at + s.length - 1]!]);
      }
    }
    for (const s of encoded) for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + s.length)) found.push([at, at + s.length]);
    return found;
  };
  return {
    scrub: (text) => cut(text, ranges(text)),
    finds: (text) => ranges(text).length > 0,
  };
}

/** One call's worth of `scrubber(secrets).scrub(text)`. */
export function scrub(text: string, secrets: readonly string[]): string {
  return scrubber(secrets).scrub(text);
}

/**
 * A copy of a JSON value with every string scrubbed, object keys included; strings `keep` says
 * yes to stay as they are (the JWTs the inference needs to recognise; they never reach a profile).
 */
export function scrubJson(value: unknown, s: Scrubber, keep: (text: string) => boolean = () => false): unknown {
  if (typeof value === "string") return keep(value) ? value : s.scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubJson(v, s, keep));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [s.scrub(k), scrubJson(v, s, keep)]));
  return value;
}

/** The ranges, merged where they overlap, each replaced by the redaction. */
function cut(text: string, ranges: Array<[number, number]>): string {
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [from, to] of ranges) {
    if (to <= at) continue;
    out += text.slice(at, Math.max(at, from)) + (from >= at ? REDACTION : "");
    at = to;
  }
  return out + text.slice(at);
}

/**
 * The text's UTF-8 bytes after undoing `%hh` and JSON's backslash escapes, with, for each byte,
 * where in the text the character it came from starts and ends. Linear in the text.
 */
function decodedView(text: string): { bytes: string; start: Int32Array; end: Int32Array } {
  const bytes: number[] = [];
  const start: number[] = [];
  const end: number[] = [];
  const emit = (codePoint: number, from: number, to: number) => {
    if (codePoint < 0x80) {
      bytes.push(codePoint);
      start.push(from);
      end.push(to);
      return;
    }
    for (const b of Buffer.from(String.fromCodePoint(codePoint), "utf8")) {
      bytes.push(b);
      start.push(from);
      end.push(to);
    }
  };
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === "%" && isHex(text, i + 1, 2)) {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
      start.push(i);
      end.push(i + 3);
      i += 3;
      continue;
    }
    if (c === "\\" && text[i + 1] === "u" && isHex(text, i + 2, 4)) {
      let unit = Number.parseInt(text.slice(i + 2, i + 6), 16);
      let to = i + 6;
      if (unit >= 0xd800 && unit <= 0xdbff && text.startsWith("\\u", to) && isHex(text, to + 2, 4)) {
        const low = Number.parseInt(text.slice(to + 2, to + 6), 16);
        if (low >= 0xdc00 && low <= 0xdfff) {
          unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
          to += 6;
        }
      }
      emit(unit, i, to);
      i = to;
      continue;
    }
    const escaped = c === "\\" ? JSON_ESCAPES[text[i + 1] ?? ""] : undefined;
    if (escaped !== undefined) {
      emit(escaped.charCodeAt(0), i, i + 2);
      i += 2;
      continue;
    }
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    emit(cp, i, i + width);
    i += width;
  }
  return { bytes: Buffer.from(bytes).toString("latin1"), start: Int32Array.from(start), end: Int32Array.from(end) };
}

const JSON_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

const HEX = /[0-9a-fA-F]/;

function isHex(text: string, from: number, count: number): boolean {
  if (from + count > text.length) return false;
  for (let i = from; i < from + count; i++) if (!HEX.test(text[i]!)) return false;
  return true;
}

/**
 * The base64 and base64url text every encoding of the secret holds, whatever stands before it:
 * for each of the three alignments (0, 1 or 2 bytes before it in the encoded data), the characters
 * made of the secret's bits alone (the first one or two and the last may mix in a neighbour's).
 */
function base64Forms(secret: string): string[] {
  const raw = Buffer.from(secret, "utf8");
  const forms: string[] = [];
  for (const before of [0, 1, 2]) {
    const text = Buffer.concat([Buffer.alloc(before), raw])
      .toString("base64")
      .replace(/=+$/, "");
    const core = text.slice([0, 2, 3][before], (before + raw.length) % 3 === 0 ? text.length : text.length - 1);
    forms.push(core, core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return forms;
}
