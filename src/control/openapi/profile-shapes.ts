import { type JsonSchema, refusalGroupOf, type ShapedAnswer, type ShapedRefusal, type ShapedSchemas } from "../../core/answer-shaper.js";
import type { EndpointName } from "../../core/context.js";
import { catalogueEntry, type ErrorCode, STATUS_TITLES } from "../../core/error-catalogue.js";
import { headers as headerComponents } from "./components.js";
import { ADAPTER_CODES, type PathDoc, problemContent, RESPONDED_CODES, type RefusalResponses, routeRefusalHeaders } from "./operations.js";

/**
 * The merchant API's paths as the active response profile answers them, code by code: each
 * refusal status lists what every code that can answer it sends under the profile (its body, one
 * branch per distinct shape, or no body; its challenge; the profile's headers), each success its
 * status, body or none and headers, and every answer the profile-wide headers (not the JWKS's).
 * What the profile leaves alone stays the sandbox's problem+json; what the HTTP adapter answers
 * before the pipeline is never shaped. The control plane is never shaped.
 */

/** The extension listing the codes of a status that answer with no body at all, beside others that have one. */
export const NO_BODY_EXTENSION = "x-sandbox-no-body";

type HeaderObject = { $ref?: string; schema?: JsonSchema; required?: boolean; description?: string };

interface Variant {
  codes: ErrorCode[];
  /** undefined: no body; `problem`: the sandbox's problem+json. */
  content: { contentType: string; schema: JsonSchema } | "problem" | undefined;
  headers: Map<string, [string, HeaderObject]>;
}

export function profileRefusals(shapes: ShapedSchemas, profile: string): RefusalResponses {
  return (doc, refused, written, given, route) => {
    const notes = { ...given };
    const group = route === undefined ? undefined : refusalGroupOf(route as EndpointName);
    const finished = route !== "jwks";
    const responses: Record<string, object> = { ...written };
    const codes = [...refused];
    // The login's refused credentials are Lexik's own body unless the profile shapes them as its other refusals.
    if (route === "login" && shapes.refusal("login", "login_invalid_credentials", 401, catalogueEntry("login_invalid_credentials").error)) {
      // Beside it under a session's base URL, written into the same response: another merchant's credentials.
      const lexik = written["401"] as ResponseObject | undefined;
      const mismatch = lexik?.content?.["application/problem+json"] !== undefined;
      if (lexik) notes[401] ??= lexik.description.replace(/: Lexik's own body, not problem\+json\./, ".");
      codes.push(["login_invalid_credentials", 401], ...(mismatch ? [["session_credentials_mismatch", 401] as const] : []));
      delete responses["401"];
    }
    const byStatus = new Map<number, Variant[]>();
    for (const [code, sandboxStatus] of codes) {
      const errors = catalogueEntry(code).error;
      const shaped = ADAPTER_CODES.has(code) || RESPONDED_CODES.has(code) ? undefined : shapes.refusal(group, code, sandboxStatus, errors);
      const status = shaped?.status ?? sandboxStatus;
      const variant = shaped
        ? shapedVariant(doc, code, sandboxStatus, shaped)
        : ({ codes: [code], content: "problem", headers: headerMap(routeRefusalHeaders(doc, sandboxStatus)) } satisfies Variant);
      // The profile-wide headers go on every answer the pipeline makes (shaper.finish), last.
      if (finished && !ADAPTER_CODES.has(code))
        for (const [name, schema] of Object.entries(shapes.headers)) setHeader(variant.headers, name, { schema, required: true });
      byStatus.set(status, [...(byStatus.get(status) ?? []), variant]);
    }
    for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
      if (responses[status] !== undefined) continue;
      responses[status] = refusalResponse(status, byStatus.get(status)!, notes?.[status], profile);
    }
    // A response written out and kept (the login's Lexik 401 without a refusal shape) gets the wide headers too.
    if (finished) {
      for (const [status, response] of Object.entries(written)) {
        if (responses[status] === response && Number(status) >= 400) responses[status] = withWideHeaders(response as ResponseObject, shapes);
      }
    }
    return responses;
  };
}

function shapedVariant(doc: PathDoc, code: ErrorCode, sandboxStatus: number, shaped: ShapedRefusal): Variant {
  const route = routeRefusalHeaders(doc, shaped.status);
  // The route's own headers (Allow, Retry-After, the login's Deprecation …) stay; the challenge is the profile's.
  delete route["WWW-Authenticate"];
  const headers = headerMap(route);
  const keep = routeRefusalHeaders(doc, sandboxStatus)["WWW-Authenticate"];
  if (shaped.challenge === "keep" && keep) setHeader(headers, "WWW-Authenticate", keep);
  else if (typeof shaped.challenge === "object") setHeader(headers, "WWW-Authenticate", { schema: shaped.challenge, required: true });
  for (const [name, schema] of Object.entries(shaped.headers)) setHeader(headers, name, { schema, required: true });
  return { codes: [code], content: shaped.content, headers };
}

function refusalResponse(status: number, variants: Variant[], note: string | undefined, profile: string): object {
  const codes = [...new Set(variants.flatMap((v) => v.codes))];
  const bodiless = variants.filter((v) => v.content === undefined).flatMap((v) => v.codes);
  const problems = variants.filter((v) => v.content === "problem").flatMap((v) => v.codes);
  const content: Record<string, object> = problems.length > 0 ? { ...problemContent(status, problems) } : {};
  const byType = new Map<string, Array<{ codes: ErrorCode[]; schema: JsonSchema }>>();
  for (const v of variants) {
    if (v.content === undefined || v.content === "problem") continue;
    const branches = byType.get(v.content.contentType) ?? [];
    const same = branches.find((b) => JSON.stringify(b.schema) === JSON.stringify((v.content as { schema: JsonSchema }).schema));
    if (same) same.codes.push(...v.codes);
    else branches.push({ codes: [...v.codes], schema: v.content.schema });
    byType.set(v.content.contentType, branches);
  }
  for (const [type, branches] of byType) content[type] = { schema: union(branches) };
  const list = (cs: readonly string[]) => cs.map((c) => `\`${c}\``).join(", ");
  const none = bodiless.length === 0 ? "" : bodiless.length === codes.length ? " No body." : ` No body for ${list(bodiless)}.`;
  return {
    description: `${note ?? `${STATUS_TITLES[status] ?? status}: ${list(codes)}.`} In the '${profile}' response profile's shape.${none}`,
    headers: mergedHeaders(variants),
    ...(Object.keys(content).length > 0 && { content }),
    ...(bodiless.length > 0 && Object.keys(content).length > 0 && { [NO_BODY_EXTENSION]: bodiless }),
  };
}

/**
 * One schema for the bodies of several codes: each distinct shape a branch naming its codes;
 * `oneOf` when constants tell every two branches apart (a client can switch on them), else `anyOf`.
 */
function union(branches: Array<{ codes: ErrorCode[]; schema: JsonSchema }>): JsonSchema {
  const described = branches.map((b) => ({ ...b.schema, description: `Sent for ${b.codes.join(", ")}.` }));
  if (described.length === 1) return described[0]!;
  return { [discriminated(branches.map((b) => b.schema)) ? "oneOf" : "anyOf"]: described };
}

/** Whether no body can match two branches: every pair differs in a constant both require at the same place. */
function discriminated(schemas: JsonSchema[]): boolean {
  const constants = schemas.map((s) => constantsOf(s));
  return constants.every((a, i) =>
    constants.slice(i + 1).every((b) => [...a].some(([path, value]) => b.get(path) !== undefined && b.get(path) !== value)),
  );
}

/** The required members' constants of an object schema, by path (JSON text of each value). */
function constantsOf(schema: JsonSchema, path = "", out = new Map<string, string>()): Map<string, string> {
  if (schema.const !== undefined) out.set(path, JSON.stringify(schema.const));
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  const required = (schema.required as string[] | undefined) ?? [];
  for (const key of required) if (properties?.[key]) constantsOf(properties[key], `${path}/${key}`, out);
  return out;
}

/** The headers of a status: each one any variant sends, required when every variant sends it surely. */
function mergedHeaders(variants: Variant[]): Record<string, HeaderObject> {
  const names = new Map<string, string>();
  for (const v of variants) for (const [key, [name]] of v.headers) if (!names.has(key)) names.set(key, name);
  const out: Record<string, HeaderObject> = {};
  for (const [key, name] of names) {
    const objects = variants.map((v) => v.headers.get(key)?.[1]);
    const distinct = [...new Map(objects.filter((o) => o !== undefined).map((o) => [JSON.stringify({ ...o, required: undefined }), o])).values()];
    const required = objects.every((o) => o?.required === true);
    const one: HeaderObject = distinct.length === 1 ? { ...distinct[0]! } : { schema: { anyOf: distinct.map((o) => schemaOf(name, o)) } };
    if (one.$ref) out[name] = required ? { ...(headerComponents as Record<string, HeaderObject>)[one.$ref.split("/").at(-1)!], required } : one;
    else out[name] = { ...one, ...(required ? { required: true } : { required: undefined }) };
    if (out[name]!.required === undefined) delete out[name]!.required;
  }
  return out;
}

function schemaOf(name: string, header: HeaderObject): JsonSchema {
  if (!header.$ref) return header.schema ?? {};
  const component = (headerComponents as Record<string, { schema?: JsonSchema }>)[header.$ref.split("/").at(-1)!];
  if (!component?.schema) throw new Error(`The header ${name} refers to no component with a schema.`);
  return component.schema;
}

function headerMap(headers: Record<string, object>): Map<string, [string, HeaderObject]> {
  const map = new Map<string, [string, HeaderObject]>();
  for (const [name, header] of Object.entries(headers)) setHeader(map, name, header as HeaderObject);
  return map;
}

/** A header set later wins (as the runtime's later layers do), under its first-written name. */
function setHeader(map: Map<string, [string, HeaderObject]>, name: string, header: HeaderObject): void {
  const key = name.toLowerCase();
  map.set(key, [map.get(key)?.[0] ?? name, header]);
}

interface ResponseObject {
  description: string;
  headers?: Record<string, object>;
  content?: Record<string, object>;
}

function withWideHeaders(response: ResponseObject, shapes: ShapedSchemas): ResponseObject {
  const map = headerMap(response.headers ?? {});
  for (const [name, schema] of Object.entries(shapes.headers)) setHeader(map, name, { schema, required: true });
  return { ...response, headers: Object.fromEntries([...map.values()]) };
}

/**
 * The successes as the profile answers them (token, payment/init, login, the protected groups'
 * call), and the profile-wide headers on every success and scripted answer but the JWKS's.
 */
export function shapeSuccesses(paths: Record<string, object>, shapes: ShapedSchemas, profile: string): Record<string, object> {
  // Paths share operations and responses (a group's prefix and its {path}): each is shaped on its own copy.
  const shaped = structuredClone(paths) as Record<string, Record<string, { responses?: Record<string, ResponseObject> }>>;
  const success = (path: string, answer: ShapedAnswer | undefined, defaultStatus: string) => {
    for (const [method, operation] of Object.entries(shaped[path] ?? {})) {
      const responses = operation?.responses;
      const today = responses?.[defaultStatus];
      if (!responses || !today || !answer) continue;
      delete responses[defaultStatus];
      const headers = headerMap(today.headers ?? {});
      for (const [name, schema] of Object.entries(answer.headers)) setHeader(headers, name, { schema, required: true });
      responses[String(answer.status)] = {
        description: `${today.description} In the '${profile}' response profile's shape.${answer.content ? "" : " No body."}`,
        headers: Object.fromEntries([...headers.values()]),
        ...(answer.content && method !== "head" && { content: { [answer.content.contentType]: { schema: answer.content.schema } } }),
      };
    }
  };
  success("/api/v2/auth/token", shapes.token, "200");
  success("/api/v2/payment/init", shapes.paymentInit, "201");
  success("/api/login_check", shapes.login, "200");
  for (const path of Object.keys(shaped).filter((p) => /^\/api\/v2\/(payment|cashout)(\/\{path\})?$/.test(p))) success(path, shapes.protected, "200");
  for (const [path, item] of Object.entries(shaped)) {
    if (path === "/.well-known/jwks.json") continue;
    for (const operation of Object.values(item)) {
      if (typeof operation !== "object" || !operation?.responses) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === "default" || Number(status) < 400) operation.responses[status] = withWideHeaders(response, shapes);
      }
    }
  }
  return shaped;
}
