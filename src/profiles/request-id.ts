import { randomBytes, randomUUID } from "node:crypto";

/**
 * The shapes a provider's request ids take, for `{{request_id}}`: one value made per request (the
 * same in every header and body of that answer), so a client that logs or echoes it sees a new
 * one each time, as against the provider.
 */
export const REQUEST_ID_SHAPES = ["uuid", "hex32", "hex16", "alnum16", "ulid", "traceparent"] as const;
export type RequestIdShape = (typeof REQUEST_ID_SHAPES)[number];

export const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export function newRequestId(shape: RequestIdShape, nowMs: number): string {
  switch (shape) {
    case "uuid":
      return randomUUID();
    case "hex32":
      return randomBytes(16).toString("hex");
    case "hex16":
      return randomBytes(8).toString("hex");
    case "alnum16":
      return pick(ALNUM, 16);
    case "ulid":
      return ulidTime(nowMs) + pick(CROCKFORD, 16);
    case "traceparent":
      // W3C Trace Context's traceparent: version 00, a trace id, a parent id, sampled.
      return `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
  }
}

/** A ULID's first 10 characters: the time in milliseconds, base 32. */
function ulidTime(ms: number): string {
  let rest = Math.max(0, Math.floor(ms));
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/** `length` random characters of `alphabet`. */
export function pick(alphabet: string, length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  // 256 is not a multiple of 62: the bias is below 1 %, fine for an id that only has to look right.
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

/** A JSON Schema pattern for each shape (the OpenAPI document and `calibrate --check` compare by it). */
export const REQUEST_ID_PATTERNS: Readonly<Record<RequestIdShape, string>> = {
  uuid: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
  hex32: "^[0-9a-f]{32}$",
  hex16: "^[0-9a-f]{16}$",
  alnum16: "^[A-Za-z0-9]{16}$",
  ulid: "^[0-9A-HJKMNP-TV-Z]{26}$",
  traceparent: "^00-[0-9a-f]{32}-[0-9a-f]{16}-0[0-3]$",
};
