/**
 * PHP's json_encode, byte for byte, for the PHP fakes (lexik.ts, laravel.ts): the bytes a client
 * reads are part of what it meets. RESEARCH-24 §0:
 * - Symfony's JsonResponse encodes with JSON_HEX_TAG | JSON_HEX_APOS | JSON_HEX_AMP | JSON_HEX_QUOT
 *   (symfony/symfony 7.2 @5feb749, src/Symfony/Component/HttpFoundation/JsonResponse.php):
 *   `/` as `\/`, `"` in strings as `\u0022`, `<` `>` `&` `'` as `\u003C` `\u003E` `\u0026` `\u0027`.
 * - Laravel's JsonResponse uses options 0 (laravel/framework 13.x @bd71b45,
 *   src/Illuminate/Http/JsonResponse.php): `/` as `\/`, `"` as `\"`; its exception renderer
 *   JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES (Foundation/Exceptions/Handler.php prepareJsonResponse).
 * Without JSON_UNESCAPED_UNICODE every non-ASCII character is `\uXXXX` (lower-case hex, as PHP
 * writes it; the HEX_* escapes are upper-case, as PHP writes those).
 */
export interface PhpJsonFlags {
  hexTag?: boolean;
  hexApos?: boolean;
  hexAmp?: boolean;
  hexQuot?: boolean;
  unescapedSlashes?: boolean;
  pretty?: boolean;
}

/** Symfony's JsonResponse::DEFAULT_ENCODING_OPTIONS (15). */
export const SYMFONY_JSON: PhpJsonFlags = { hexTag: true, hexApos: true, hexAmp: true, hexQuot: true };
/** Laravel's response()->json(): options 0. */
export const LARAVEL_JSON: PhpJsonFlags = {};
/** Laravel's exception renderer: JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES. */
export const LARAVEL_EXCEPTION_JSON: PhpJsonFlags = { pretty: true, unescapedSlashes: true };

export function phpJsonEncode(value: unknown, flags: PhpJsonFlags, depth = 0): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return encodeString(value, flags);
  const pad = (d: number) => (flags.pretty ? `\n${"    ".repeat(d)}` : "");
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[${value.map((v) => pad(depth + 1) + phpJsonEncode(v, flags, depth + 1)).join(",")}${pad(depth)}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  const colon = flags.pretty ? ": " : ":";
  return `{${entries.map(([k, v]) => pad(depth + 1) + encodeString(k, flags) + colon + phpJsonEncode(v, flags, depth + 1)).join(",")}${pad(depth)}}`;
}

function encodeString(s: string, flags: PhpJsonFlags): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const code = s.charCodeAt(i);
    if (c === '"') out += flags.hexQuot ? "\\u0022" : '\\"';
    else if (c === "\\") out += "\\\\";
    else if (c === "/") out += flags.unescapedSlashes ? "/" : "\\/";
    else if (c === "<" && flags.hexTag) out += "\\u003C";
    else if (c === ">" && flags.hexTag) out += "\\u003E";
    else if (c === "&" && flags.hexAmp) out += "\\u0026";
    else if (c === "'" && flags.hexApos) out += "\\u0027";
    else if (c === "\b") out += "\\b";
    else if (c === "\f") out += "\\f";
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if (code < 0x20 || code > 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += c;
  }
  return `${out}"`;
}
