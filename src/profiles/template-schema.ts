import type { JsonSchema } from "../core/answer-shaper.js";
import { COMPANION_ALPHABETS, COMPANION_SHAPE, type CompanionAlphabet } from "./companion-token.js";
import type { PlaceholderType } from "./placeholders.js";
import { REQUEST_ID_PATTERNS, type RequestIdShape } from "./request-id.js";
import { PLACEHOLDER, wholePlaceholder } from "./template.js";
import { isTimeFormat, TIME_PATTERNS, type TimeFormat } from "./time-value.js";

/**
 * The JSON Schema of what a template renders, for the OpenAPI document: constants as `const`,
 * placeholders by what they render (a request id by its shape's pattern, a time by its format,
 * a value the answer fixes, such as a refusal's code or message, as that constant), text with
 * placeholders as a pattern of its literal parts and each placeholder's own pattern. A value that
 * differs per request is never a constant.
 */

/** What one placeholder renders: the schema of its value alone, and its text's pattern inside a longer string. */
export interface PlaceholderDoc {
  readonly schema: JsonSchema;
  /** A regular expression (unanchored, Unicode mode) every text of the value matches. */
  readonly pattern: string;
}

export type Resolve = (name: string, format: string | undefined) => PlaceholderDoc;

const ANY_TEXT = "[\\s\\S]*";
/** A literal as a regular expression of Unicode mode (which allows escaping syntax characters only). */
export function escapePattern(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/** A value the answer fixes: `reduce` is what rendering does to it (a challenge's quoted-string rule). */
export function constantDoc(value: string | number | null, reduce: (text: string) => string = (t) => t): PlaceholderDoc {
  if (value === null) return { schema: { type: "null" }, pattern: "" };
  const type = typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : "string";
  return { schema: { type, const: value }, pattern: escapePattern(reduce(String(value))) };
}

/** One of several values (an OAuth error the code may carry, or none). */
export function oneOfDoc(values: ReadonlyArray<string | null>): PlaceholderDoc {
  if (values.length === 1) return constantDoc(values[0]!);
  const texts = values.filter((v): v is string => v !== null);
  const optional = texts.length < values.length;
  return {
    schema: { enum: [...values] },
    pattern: `(?:${texts.map(escapePattern).join("|")})${optional ? "?" : ""}`,
  };
}

/** A time in `format`: an integer for the Unix formats, else text of its shape (date-time for RFC 3339). */
export function timeDoc(format: TimeFormat, nullable: boolean): PlaceholderDoc {
  const pattern = TIME_PATTERNS[format];
  const number = format === "unix-fraction" ? "number" : "integer";
  const schema: JsonSchema = format.startsWith("unix")
    ? { type: nullable ? [number, "null"] : number, minimum: 0 }
    : {
        type: nullable ? ["string", "null"] : "string",
        ...(format.startsWith("rfc3339") && { format: "date-time" }),
        pattern: `^${pattern}$`,
      };
  return { schema, pattern: nullable ? `(?:${pattern})?` : pattern };
}

/**
 * The resolver of a part's placeholders: `known` first (what the answer fixes), then the request
 * id in the profile's shape, times by their format (`defaultFormat` when the template names none),
 * and the rest by the type of their value.
 */
export function resolver(
  types: Readonly<Record<string, PlaceholderType>>,
  requestId: RequestIdShape,
  known: Readonly<Record<string, PlaceholderDoc>> = {},
  defaultFormat: (name: string) => TimeFormat = () => "rfc3339-ms",
): Resolve {
  return (name, format) => {
    const fixed = known[name];
    if (fixed) return fixed;
    if (name === "request_id") {
      const pattern = REQUEST_ID_PATTERNS[requestId].slice(1, -1);
      return { schema: { type: "string", pattern: `^${pattern}$` }, pattern };
    }
    const type = types[name] ?? "string";
    if (type === "time" || type === "time|null") {
      return timeDoc(format !== undefined && isTimeFormat(format) ? format : defaultFormat(name), type === "time|null");
    }
    if (type === "counter") return { schema: { type: "integer", minimum: 0 }, pattern: "\\d+" };
    if (type === "companion") return companionDoc(format);
    return { schema: typeSchema(type), pattern: ANY_TEXT };
  };
}

/** The schema of what a JSON template renders. */
export function templateSchema(template: unknown, resolve: Resolve): JsonSchema {
  if (typeof template === "string") {
    const whole = wholePlaceholder(template);
    if (whole !== undefined) return resolve(whole.name, whole.format).schema;
    return textSchema(template, resolve);
  }
  if (typeof template === "number") return { type: "number", const: template };
  if (typeof template === "boolean") return { type: "boolean", const: template };
  if (template === null) return { type: "null" };
  if (Array.isArray(template)) {
    const items = template.map((item) => templateSchema(item, resolve));
    return { type: "array", prefixItems: items, minItems: items.length, maxItems: items.length };
  }
  const entries = Object.entries(template as Record<string, unknown>);
  return {
    type: "object",
    properties: Object.fromEntries(entries.map(([key, value]) => [key, templateSchema(value, resolve)])),
    required: entries.map(([key]) => key),
  };
}

/**
 * The schema of a template rendered as text (a header value, a string member): a constant, a
 * Unix time as an integer, a date-time, or a string of the template's pattern.
 */
export function textSchema(template: string, resolve: Resolve, reduce?: (text: string) => string): JsonSchema {
  const constant = constantText(template, resolve, reduce);
  if (constant !== undefined) return { type: "string", const: constant };
  const whole = wholePlaceholder(template);
  const doc = whole && resolve(whole.name, whole.format);
  if (doc && (doc.schema.type === "integer" || doc.schema.const !== undefined)) {
    return doc.schema.const !== undefined ? { type: "string", const: String(doc.schema.const) } : { type: "integer", minimum: 0 };
  }
  const pattern = textPattern(template, resolve);
  if (pattern === ANY_TEXT) return { type: "string" };
  if (whole === undefined) return { type: "string", pattern: `^${pattern}$` };
  return { type: "string", ...(typeof doc?.schema.format === "string" && { format: doc.schema.format }), pattern: `^${pattern}$` };
}

/**
 * The text a template renders when every placeholder in it is a value the answer fixes (a code, a
 * status): the same on every request. `reduce` is what rendering does to each value.
 */
function constantText(template: string, resolve: Resolve, reduce: (text: string) => string = (t) => t): string | undefined {
  let fixed = true;
  const text = template.replace(PLACEHOLDER, (_, name: string, format: string | undefined) => {
    const value = resolve(name, format).schema.const;
    if (value === undefined) fixed = false;
    return reduce(value === null ? "" : String(value));
  });
  return fixed ? text : undefined;
}

/** A template's text as an unanchored pattern: its literals escaped (after `reduce`), each placeholder's pattern. */
export function textPattern(template: string, resolve: Resolve, reduce: (text: string) => string = (t) => t): string {
  const parts: string[] = [];
  let at = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (m.index > at) parts.push(escapePattern(reduce(template.slice(at, m.index))));
    parts.push(resolve(m[1]!, m[2]).pattern);
    at = m.index + m[0].length;
  }
  if (at < template.length) parts.push(escapePattern(reduce(template.slice(at))));
  // Runs of "any text" are one: the pattern stays linear to match.
  let pattern = parts.join("");
  while (pattern.includes(ANY_TEXT + ANY_TEXT)) pattern = pattern.replaceAll(ANY_TEXT + ANY_TEXT, ANY_TEXT);
  return pattern;
}

function typeSchema(type: PlaceholderType): JsonSchema {
  switch (type) {
    case "string|null":
      return { type: ["string", "null"] };
    case "number|null":
      return { type: ["number", "null"] };
    case "string|number":
      return { type: ["string", "number"] };
    case "string|number|null":
      return { type: ["string", "number", "null"] };
    case "time":
    case "time|null":
      return { type: ["string", "integer", ...(type === "time|null" ? ["null"] : [])] };
    default:
      return { type };
  }
}

/** A companion token of its shape (companion-token.ts): a JWT's three parts, a uuid, N characters of an alphabet. */
function companionDoc(shape: string | undefined): PlaceholderDoc {
  const m = COMPANION_SHAPE.exec(shape ?? "");
  const pattern = m?.[2]
    ? `${COMPANION_ALPHABETS[m[2] as CompanionAlphabet]}{${m[3]}}`
    : shape === "uuid"
      ? REQUEST_ID_PATTERNS.uuid.slice(1, -1)
      : "[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+";
  return { schema: { type: "string", pattern: `^${pattern}$` }, pattern };
}
