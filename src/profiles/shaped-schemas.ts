import type { JsonSchema, RefusalGroup, ShapedAnswer, ShapedRefusal, ShapedSchemas } from "../core/answer-shaper.js";
import { quotedStringSafe } from "../core/problem.js";
import { statusText } from "./facts.js";
import { PLACEHOLDERS, type PlaceholderType } from "./placeholders.js";
import { type MergedRefusal, mergedRefusal } from "./refusal-shape.js";
import type { RequestIdShape } from "./request-id.js";
import type { AnswerFile, ProfileFile } from "./schema.js";
import { DEFAULT_TEXT_CONTENT_TYPE, escapeMarkup, isMarkup } from "./text-body.js";
import { constantDoc, oneOfDoc, type PlaceholderDoc, resolver, templateSchema, textPattern, textSchema } from "./template-schema.js";

/**
 * What a profile sends, as the JSON Schemas the OpenAPI document gives its responses: read from
 * the same files and the same merge of refusal layers as the renderer (shaper.ts), so the document
 * says what the wire carries. Per refusal code, what the answer fixes (its status, code, error,
 * the provider's message) is a constant; what differs per request (a request id, now) a pattern.
 */
export function shapedSchemas(profile: ProfileFile): ShapedSchemas {
  const requestId = profile.requestId ?? "uuid";
  const wide = resolver(PLACEHOLDERS.headers, requestId);
  const schemas: ShapedSchemas = {
    headers: Object.fromEntries(Object.entries(profile.headers ?? {}).map(([name, value]) => [headerCase(name), textSchema(value, wide)])),
    refusal: (group, code, status, errors) => refusalSchema(profile, requestId, group, code, status, errors),
  };
  const token = answerSchema(profile.token, 200, PLACEHOLDERS.token, requestId, TOKEN_KNOWN);
  const login = answerSchema(profile.login, 200, PLACEHOLDERS.login, requestId, TOKEN_KNOWN);
  const paymentInit = answerSchema(profile.paymentInit, 201, PLACEHOLDERS.paymentInit, requestId, { status: constantDoc("created") });
  const protectedCall = answerSchema(profile.protected, 200, PLACEHOLDERS.protected, requestId, {});
  if (token) schemas.token = token;
  if (login) schemas.login = login;
  if (paymentInit) schemas.paymentInit = paymentInit;
  if (protectedCall) schemas.protected = protectedCall;
  return schemas;
}

/** A JWT's compact form, as the token and login answers carry it. */
const JWT_PATTERN = "[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*";
const TOKEN_KNOWN: Readonly<Record<string, PlaceholderDoc>> = {
  access_token: { schema: { type: "string", pattern: `^${JWT_PATTERN}$` }, pattern: JWT_PATTERN },
  token_type: constantDoc("Bearer"),
  expires_in: { schema: { type: "integer", minimum: 1 }, pattern: "\\d+" },
};

const NO_STORE: JsonSchema = { type: "string", const: "no-store" };
/** The sandbox's fix-it text as a header carries it: printable ASCII (shaper.ts, core/printable.ts). */
const EXPLANATION: JsonSchema = { type: "string", pattern: "^[\\x20-\\x7e]*$" };

function answerSchema(
  file: AnswerFile | undefined,
  defaultStatus: number,
  types: Readonly<Record<string, PlaceholderType>>,
  requestId: RequestIdShape,
  known: Readonly<Record<string, PlaceholderDoc>>,
): ShapedAnswer | undefined {
  if (!file) return undefined;
  const status = file.status ?? defaultStatus;
  const resolve = resolver(types, requestId, { status: constantDoc(status), status_text: constantDoc(statusText(status)), ...known });
  const own = Object.fromEntries(Object.entries(file.headers ?? {}).map(([name, value]) => [headerCase(name), value]));
  return {
    status,
    content: file.empty
      ? undefined
      : file.text !== undefined
        ? textContent(file.text, file.contentType, resolve)
        : file.body === undefined
          ? undefined
          : { contentType: file.contentType ?? "application/json", schema: templateSchema(file.body, resolve) },
    headers: { "Cache-Control": NO_STORE, ...headerSchemas(own, resolve) },
  };
}

function refusalSchema(
  profile: ProfileFile,
  requestId: RequestIdShape,
  group: RefusalGroup | undefined,
  sandboxCode: string,
  sandboxStatus: number,
  errors: readonly string[],
): ShapedRefusal | undefined {
  const merged = mergedRefusal(profile.refusal, profile.codes, group, sandboxCode);
  if (!merged.shaped) return undefined;
  const status = merged.status ?? sandboxStatus;
  const code = merged.code ?? sandboxCode;
  // The runtime sends the error the refusal carries, or none (null).
  const error = oneOfDoc(errors.length === 1 ? [errors[0]!] : [...errors, null]);
  const fixed = (reduce?: (text: string) => string): Record<string, PlaceholderDoc> => ({
    status: constantDoc(status, reduce),
    status_text: constantDoc(statusText(status), reduce),
    code: constantDoc(code, reduce),
    sandbox_code: constantDoc(sandboxCode, reduce),
    error,
  });
  const types = PLACEHOLDERS.refusal;
  const defaultFormat = (name: string) => (name === "token_expires_at" ? "rfc3339" : "rfc3339-ms");
  const withMessage = (reduce?: (text: string) => string) => {
    const base = resolver(types, requestId, fixed(reduce), defaultFormat);
    const message = merged.message === undefined ? undefined : messageDoc(merged.message, base, reduce);
    return resolver(types, requestId, { ...fixed(reduce), ...(message && { message }) }, defaultFormat);
  };
  const resolve = withMessage();
  // The layers' header names are lower-case (refusal-shape.ts): the runtime's no-store goes unless one sets Cache-Control.
  const headers: Record<string, JsonSchema> = {
    "Cache-Control": NO_STORE,
    ...headerSchemas(Object.fromEntries([...merged.headers].map(([name, value]) => [headerCase(name), value])), resolve),
    "X-Sandbox-Explanation": EXPLANATION,
  };
  return {
    status,
    content: merged.empty
      ? undefined
      : merged.text !== undefined
        ? textContent(merged.text, merged.contentType, resolve)
        : { contentType: merged.contentType ?? "application/problem+json", schema: bodySchema(merged, resolve) },
    challenge:
      merged.challenge === "keep" || merged.challenge === "omit"
        ? merged.challenge
        : challengeSchema(merged.challenge, withMessage(quotedStringSafe)),
    headers,
  };
}

/** A text body (text-body.ts): a string of its template's pattern, under its media type without parameters. */
function textContent(
  template: string,
  contentType: string | undefined,
  resolve: ReturnType<typeof resolver>,
): { contentType: string; schema: JsonSchema } {
  const type = contentType ?? DEFAULT_TEXT_CONTENT_TYPE;
  return { contentType: type.split(";")[0]!.trim().toLowerCase(), schema: textSchema(template, resolve, isMarkup(type) ? escapeMarkup : undefined) };
}

/** The provider's text: a constant, or the pattern of its template (an expiry in it). */
function messageDoc(template: string, resolve: ReturnType<typeof resolver>, reduce?: (text: string) => string): PlaceholderDoc {
  const pattern = textPattern(template, resolve, reduce);
  const schema = textSchema(template, resolve);
  return { schema: schema.type === "integer" ? { type: "string", pattern: `^${pattern}$` } : schema, pattern };
}

/** The body of a refusal: its template's, or the sandbox's problem+json with the profile's status and code. */
function bodySchema(merged: MergedRefusal, resolve: ReturnType<typeof resolver>): JsonSchema {
  if (merged.body !== undefined) return templateSchema(merged.body, resolve);
  const text = { type: "string" };
  return {
    type: "object",
    properties: {
      type: { type: "string", format: "uri" },
      title: text,
      status: resolve("status", undefined).schema,
      detail: text,
      code: resolve("code", undefined).schema,
      error: { type: "string" },
      error_description: text,
      instance: text,
    },
    required: ["type", "title", "status", "detail", "code", "error_description", "instance"],
  };
}

/** A challenge template's value: the rendered values reduced to RFC 6750 quoted-string characters. */
function challengeSchema(template: string, resolve: ReturnType<typeof resolver>): JsonSchema {
  const schema = textSchema(template, resolve, quotedStringSafe);
  return schema.const !== undefined ? schema : { type: "string", pattern: `^${textPattern(template, resolve)}$` };
}

function headerSchemas(headers: Readonly<Record<string, string>> | undefined, resolve: ReturnType<typeof resolver>): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, textSchema(value, resolve)]));
}

/**
 * A header name as the document and a profile file write it: X-Request-Id, Cache-Control (HTTP
 * names are case-insensitive; calibrate writes the names it records so too).
 */
export function headerCase(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}
