import { catalogueEntry, type ErrorCode, STATUS_TITLES } from "../../core/error-catalogue.js";
import { ref } from "./ref.js";

/**
 * Builds the document's `paths` from a route table (the paths and methods the router serves) and
 * the hand-written prose of each operation. Every refusal response is generated: an operation
 * names the codes it can answer, and the error catalogue gives each code's status and OAuth error,
 * so a status or code is documented exactly where the operation says it can be answered.
 */

export type Method = "get" | "head" | "post" | "put" | "patch" | "delete" | "options";

/** A code the operation can answer, at its catalogue status, or at one status of several (`[code, status]`). */
export type Refusal = ErrorCode | readonly [ErrorCode, number];

export interface OperationDoc {
  operationId: string;
  summary: string;
  description?: string;
  security: readonly object[];
  parameters?: readonly object[];
  requestBody?: object;
  /** The answers that are not problem+json refusals (successes, the login's Lexik 401), as written. */
  responses: Record<string, object>;
  /** Every code the operation can refuse with. */
  refusals: readonly Refusal[];
  /** Prose for a refusal status where the codes' meanings (schema ErrorCode) need context. */
  notes?: Partial<Record<number, string>>;
}

export interface PathDoc {
  tag: string;
  summary?: string;
  /** Where the path is served, when not only at the document's servers (the merchant API: under session base URLs too). */
  servers?: readonly object[];
  parameters?: readonly object[];
  deprecated?: boolean;
  /** Headers every answer of this path carries (the deprecated login's), refusals included. */
  headers?: Record<string, object>;
  /** The challenge header the refusals of these statuses carry. */
  challenge?: { header: "WWW-Authenticate-Bearer" | "WWW-Authenticate-ApiKey"; statuses: readonly number[] };
  /** Scenario rules shape this path's answers: X-Sandbox-Rule, and the `default` scripted answer. */
  scripted: boolean;
  /** One entry per method; a HEAD the router serves and this leaves out is documented as its GET without a body. */
  operations: Partial<Record<Method, OperationDoc>>;
}

/** What the HTTP adapter refuses before the pipeline (no profile ever shapes these). */
const BEFORE_THE_PIPELINE: readonly ErrorCode[] = [
  "http_malformed",
  "host_missing",
  "request_timeout",
  "expectation_unsupported",
  "headers_too_large",
  "headers_too_many",
];
export const ADAPTER_CODES: ReadonlySet<ErrorCode> = new Set(BEFORE_THE_PIPELINE);
/** What the server itself refuses before any route, and a bug of ours: every operation can answer these. */
const EVERYWHERE: readonly ErrorCode[] = [...BEFORE_THE_PIPELINE, "internal_error"];
/** What any scenario rule can script on a path it shapes (other statuses: the `default` answer). */
const SCRIPTABLE: readonly ErrorCode[] = ["rate_limited", "service_unavailable", "scenario_fault"];
/** Of those, the ones a rule's `respond` answers itself, as problem+json: a profile's headers only (shaper.finish). */
export const RESPONDED_CODES: ReadonlySet<ErrorCode> = new Set(["rate_limited", "service_unavailable"]);

const SCRIPTED_ANSWER = {
  description:
    "Any other answer a scenario rule scripts with `respond: {status, headers, body}` (a problem+json saying it is simulated, and by which rule, when the rule gives no body; else the rule's JSON or text body), marked by X-Sandbox-Rule. A rule may also delay the answer or drop the connection without one.",
  headers: { "X-Sandbox-Rule": ref("headers", "X-Sandbox-Rule"), "Retry-After": ref("headers", "Retry-After") },
  content: {
    "application/problem+json": { schema: ref("schemas", "ProblemDetails") },
    "application/json": { schema: {} },
    "text/plain": { schema: { type: "string" } },
  },
};

/**
 * The refusal responses of one operation, by status, merged with the ones it writes out: from the
 * error catalogue (today's problem+json), or from a response profile (profile-shapes.ts).
 */
export type RefusalResponses = (
  doc: PathDoc,
  refused: ReadonlyArray<readonly [ErrorCode, number]>,
  written: Record<string, object>,
  notes: Partial<Record<number, string>> | undefined,
  route: string | undefined,
) => Record<string, object>;

/**
 * The `paths` of the routes in `table`, each written by `docs` (a route without one is a bug: it
 * throws). A group's prefix itself (`/api/v2/payment`, which its router serves as any path under
 * it) is a path of its own, with the same operations: `{path}` cannot be empty, so a validating
 * proxy would otherwise find no operation for it.
 */
export function pathsOf(
  table: ReadonlyArray<{ path: string; methods: readonly string[]; groupPrefix?: string; name?: string }>,
  docs: Record<string, PathDoc>,
  refusalResponses: RefusalResponses = catalogueRefusals,
): Record<string, object> {
  const paths: Record<string, object> = {};
  for (const { path, methods, groupPrefix, name } of table) {
    const doc = docs[path];
    if (!doc) throw new Error(`The OpenAPI document has no prose for the route ${path}.`);
    const item: Record<string, unknown> = {
      ...(doc.summary && { summary: doc.summary }),
      ...(doc.servers && { servers: doc.servers }),
      ...(doc.parameters && { parameters: doc.parameters }),
    };
    for (const method of methods.map((m) => m.toLowerCase() as Method)) {
      const op = doc.operations[method] ?? (method === "head" ? headOf(doc.operations.get) : undefined);
      if (!op) throw new Error(`The OpenAPI document has no prose for ${method.toUpperCase()} ${path}.`);
      item[method] = operation(doc, op, method === "head", (refused, written, notes) => refusalResponses(doc, refused, written, notes, name));
    }
    if (groupPrefix) paths[groupPrefix] = atPrefix(item, groupPrefix);
    paths[path] = item;
  }
  return paths;
}

/** A group's path item for the prefix itself: no `{path}` parameter, and operation ids of its own. */
function atPrefix(item: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const { parameters: _path, summary, servers, ...operations } = item;
  return {
    summary: `${summary ?? ""} ${prefix} itself, served as every path under it.`.trim(),
    ...(servers !== undefined && { servers }),
    ...Object.fromEntries(
      Object.entries(operations).map(([method, op]) => [
        method,
        { ...(op as object), operationId: `${(op as { operationId: string }).operationId}AtPrefix` },
      ]),
    ),
  };
}

function headOf(get: OperationDoc | undefined): OperationDoc | undefined {
  return (
    get && {
      ...get,
      operationId: `${get.operationId}Head`,
      summary: `${get.summary} (headers only)`,
      description: "As GET, without a body: the same status and headers, content-length included.",
    }
  );
}

function operation(
  doc: PathDoc,
  op: OperationDoc,
  head: boolean,
  refusalResponses: (
    refused: ReadonlyArray<readonly [ErrorCode, number]>,
    written: Record<string, object>,
    notes: OperationDoc["notes"],
  ) => Record<string, object>,
): object {
  const { refusals, notes, responses: written, requestBody, ...prose } = op;
  const refused: Array<readonly [ErrorCode, number]> = [];
  for (const refusal of [...refusals, ...(doc.scripted ? SCRIPTABLE : []), ...EVERYWHERE]) {
    const [code, statuses] = typeof refusal === "string" ? [refusal, catalogueEntry(refusal).status] : [refusal[0], [refusal[1]]];
    for (const status of statuses) refused.push([code, status]);
  }
  const responses = refusalResponses(refused, written, notes);
  if (doc.scripted) responses.default = SCRIPTED_ANSWER;
  return {
    tags: [doc.tag],
    ...prose,
    ...(doc.deprecated && { deprecated: true }),
    ...(requestBody && !head && { requestBody }),
    responses: head ? withoutBodies(responses) : responses,
  };
}

/** Today's refusals: per status, one problem+json response listing its codes; a response the operation writes out wins. */
function catalogueRefusals(
  doc: PathDoc,
  refused: ReadonlyArray<readonly [ErrorCode, number]>,
  written: Record<string, object>,
  notes: Partial<Record<number, string>> | undefined,
): Record<string, object> {
  const responses: Record<string, object> = { ...written };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, status] of refused) byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    if (responses[status] === undefined) responses[status] = refusalResponse(doc, status, byStatus.get(status)!, notes?.[status]);
  }
  return responses;
}

/** The headers every refusal of `status` on the path carries, or may: the route's, Allow, Retry-After, the challenge. */
export function routeRefusalHeaders(doc: PathDoc, status: number): Record<string, object> {
  return {
    "Cache-Control": ref("headers", "Cache-Control-NoStore"),
    ...(doc.scripted && { "X-Sandbox-Rule": ref("headers", "X-Sandbox-Rule") }),
    ...doc.headers,
    ...(status === 405 && { Allow: ref("headers", "Allow") }),
    ...((status === 429 || status === 503) && { "Retry-After": ref("headers", "Retry-After") }),
    ...(doc.challenge?.statuses.includes(status) ? { "WWW-Authenticate": ref("headers", doc.challenge.header) } : {}),
  };
}

/** A problem+json body of `codes` at `status` (the OAuth error fixed when they all send the same one). */
export function problemContent(status: number, codes: readonly ErrorCode[]): object {
  const errors = new Set(codes.map((c) => (catalogueEntry(c).error.length === 1 ? catalogueEntry(c).error[0] : undefined)));
  const error = errors.size === 1 ? [...errors][0] : undefined;
  const fixed = { status: { const: status }, ...(error && { error: { const: error } }), code: { enum: codes } };
  return { "application/problem+json": { schema: { allOf: [ref("schemas", "ProblemDetails"), { type: "object", properties: fixed }] } } };
}

function refusalResponse(doc: PathDoc, status: number, codes: ErrorCode[], note: string | undefined): object {
  return {
    description:
      note ?? `${STATUS_TITLES[status]}: ${codes.map((c) => `\`${c}\``).join(", ")} (see ErrorCode for what each means and how to fix it).`,
    headers: routeRefusalHeaders(doc, status),
    content: problemContent(status, codes),
  };
}

function withoutBodies(responses: Record<string, object>): Record<string, object> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, { content: _body, ...rest }]: [string, { content?: unknown }]) => [status, rest]),
  );
}

/**
 * Moves every response that several operations share (the groups' seven methods, the control
 * plane's guarded refusals …) into `components.responses`, named by its status's reason phrase, and
 * refers to it: the same document, under half the size.
 */
const SUCCESS_TITLES: Record<string, string> = { "200": "Ok", "201": "Created", "204": "NoContent" };

interface Where {
  path: string;
  method: string;
  operationId: string;
}

/**
 * A readable name for a shared response: the status's title, `Control…` for the control plane's
 * variant (its own challenge and codes), `…Head` for HEAD's (no body), and the first operation's
 * id where one status still has several shapes.
 */
function responseName(base: string, where: Where, taken: (name: string) => boolean): string {
  const plane = where.path.startsWith("/__sandbox/") ? "Control" : "";
  const head = where.method === "head" ? "Head" : "";
  const candidates = [
    base,
    `${plane}${base}${head}`,
    `${plane}${base}${head}For${where.operationId.charAt(0).toUpperCase()}${where.operationId.slice(1)}`,
  ];
  const free = candidates.find((name) => !taken(name));
  if (free) return free;
  let n = 2;
  while (taken(`${candidates[2]}${n}`)) n++;
  return `${candidates[2]}${n}`;
}

export function shareResponses(paths: Record<string, object>): { paths: Record<string, object>; responses: Record<string, object> } {
  const uses = new Map<string, number>();
  type Operation = { operationId?: string; responses?: Record<string, object> };
  const each = (visit: (response: object, status: string, responses: Record<string, object>, where: Where) => void) => {
    for (const [path, item] of Object.entries(paths) as Array<[string, Record<string, Operation>]>) {
      for (const [method, op] of Object.entries(item)) {
        const where = { path, method, operationId: op?.operationId ?? "" };
        for (const [status, response] of Object.entries(op?.responses ?? {})) visit(response, status, op.responses!, where);
      }
    }
  };
  each((response) => {
    const key = JSON.stringify(response);
    uses.set(key, (uses.get(key) ?? 0) + 1);
  });
  const names = new Map<string, string>();
  const responses: Record<string, object> = {};
  each((response, status, owner, where) => {
    const key = JSON.stringify(response);
    if ((uses.get(key) ?? 0) < 2) return;
    let name = names.get(key);
    if (!name) {
      const base =
        status === "default" ? "Scripted" : (STATUS_TITLES[Number(status)] ?? SUCCESS_TITLES[status] ?? `Status${status}`).replace(/[^A-Za-z]/g, "");
      name = responseName(base, where, (candidate) => candidate in responses);
      names.set(key, name);
      responses[name] = response;
    }
    owner[status] = ref("responses", name);
  });
  return { paths, responses };
}
