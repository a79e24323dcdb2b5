import { connect } from "node:net";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";

/**
 * Checks an HTTP answer against an OpenAPI 3.1 document as a validating proxy would: the status
 * must be documented for the operation (its `default` only for an answer a scenario rule scripted,
 * marked by X-Sandbox-Rule: documentedStatus), the headers a client acts on must be
 * listed and every listed header must match its schema, the media type must be one the response
 * lists, and the body must validate against that media type's JSON Schema (2020-12, OpenAPI 3.1's
 * dialect) with formats checked. A HEAD answer must have no body and no Content-Length other than
 * its GET's. Each problem is returned as one line, so a test can report all of them at once.
 */

/** The headers a client acts on: an answer that has one must find it listed. */
const SIGNIFICANT_HEADERS = [
  "www-authenticate",
  "allow",
  "retry-after",
  "deprecation",
  "sunset",
  "link",
  "location",
  "pragma",
  "x-sandbox-rule",
  "x-sandbox-explanation",
  "x-request-id",
];
/** The extension a response names the codes with, that answer its status with no body beside codes that have one. */
const NO_BODY = "x-sandbox-no-body";
/** Keywords OpenAPI 3.1 adds to JSON Schema, declared so ajv's strict mode accepts them, plus the document's own members. */
const OPENAPI_KEYWORDS = ["discriminator", "xml", "externalDocs", "example"];
const DOC_ID = "https://merchant-sandbox.test/openapi.json";

/** An answer, read off the wire byte for byte. */
export interface WireReply {
  status: number;
  headers: Map<string, string[]>;
  body: Buffer;
}

export function header(reply: WireReply, name: string): string | undefined {
  return reply.headers.get(name)?.join(", ");
}

/**
 * One request on its own connection, written and read raw: any method (TRACE, FOO), any header
 * list, a body of any bytes, and a HEAD answer's stray body would be seen.
 */
export function wireRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Uint8Array,
): Promise<WireReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let answered = false;
    const done = () => {
      if (answered) return;
      answered = true;
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf("\r\n\r\n");
      const head = raw.subarray(0, split).toString("latin1").split("\r\n");
      const parsed = new Map<string, string[]>();
      for (const line of head.slice(1)) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim().toLowerCase();
        parsed.set(name, [...(parsed.get(name) ?? []), line.slice(colon + 1).trim()]);
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0]!)?.[1]), headers: parsed, body: raw.subarray(split + 4) });
    };
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      // An event stream never ends on its own: read until its first events are in, then close.
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf("\r\n\r\n");
      if (split >= 0 && /\r\ncontent-type: text\/event-stream/i.test(raw.subarray(0, split).toString("latin1")) && raw.includes("\n\n", split + 4)) {
        done();
        socket.destroy();
      }
    });
    socket.on("error", (e) => (answered ? undefined : reject(e)));
    socket.on("end", done);
    const bytes = body === undefined ? undefined : typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    if (bytes) lines.push(`Content-Length: ${bytes.length}`);
    socket.write(Buffer.concat([Buffer.from([...lines, "Connection: close", "", ""].join("\r\n")), bytes ?? Buffer.alloc(0)]));
  });
}

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document, walked member by member
type Json = any;

/**
 * The key of `responses` an answer is checked against: its own status, or, for an answer a
 * scenario rule scripted (it carries X-Sandbox-Rule), the operation's `default` (the rule's
 * `respond`, any status). Any other answer at a status the operation does not list is undocumented:
 * falling back to `default` for it would let every undocumented status of a scripted path pass.
 */
export function documentedStatus(responses: Record<string, unknown>, status: number, scriptedByRule: boolean): string | undefined {
  if (responses[String(status)] !== undefined) return String(status);
  return scriptedByRule && responses.default !== undefined ? "default" : undefined;
}

export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true, allowUnionTypes: true });
    this.ajv.addVocabulary([...OPENAPI_KEYWORDS, "openapi", "info", "servers", "paths", "components", "tags", "security", "webhooks"]);
    // ajv-formats ships as CommonJS with a default member.
    const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv2020) => void;
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  /** The operations of the document, as [path template, method]. */
  operations(): Array<[string, string]> {
    return Object.entries(this.doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      ["get", "head", "post", "put", "patch", "delete", "options", "trace"].filter((m) => item[m]).map((m): [string, string] => [path, m]),
    );
  }

  /** The server URLs a path lists of its own (the merchant API's `/s/{session_id}`), none when only the document's. */
  serversOf(path: string): string[] {
    return ((this.doc.paths[path]?.servers ?? []) as Array<{ url: string }>).map((s) => s.url);
  }

  /** The methods the document lists on a path (lower case). */
  methodsOf(path: string): string[] {
    return this.operations()
      .filter(([p]) => p === path)
      .map(([, m]) => m);
  }

  /**
   * Every way `reply` departs from what the document says operation `method path` answers.
   * `sentHead`: the request was a HEAD (answered by whatever operation), so it has no body.
   */
  violations(path: string, method: string, reply: WireReply, where: string, sentHead = method === "head"): string[] {
    const out: string[] = [];
    const bad = (what: string) => out.push(`${where} → ${reply.status}: ${what}`);
    const opPointer = `/paths/${pointerSegment(path)}/${method}`;
    const op = this.at(opPointer);
    if (!op) return [`${where}: no operation ${method.toUpperCase()} ${path} in the document`];
    const key = documentedStatus(op.responses, reply.status, reply.headers.has("x-sandbox-rule"));
    if (!key) {
      bad(
        `status not documented (lists ${Object.keys(op.responses).join(" ")}, no X-Sandbox-Rule); body ${reply.body.toString("utf8").slice(0, 160)}`,
      );
      return out;
    }
    const { value: response, pointer } = this.resolve(`${opPointer}/responses/${pointerSegment(key)}`);
    const listed = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
    for (const name of SIGNIFICANT_HEADERS) if (reply.headers.has(name) && !listed.includes(name)) bad(`header ${name} not documented`);
    for (const name of Object.keys(response.headers ?? {})) {
      const value = header(reply, name.toLowerCase());
      const { value: h, pointer: hp } = this.resolve(`${pointer}/headers/${pointerSegment(name)}`);
      if (value === undefined) {
        if (h.required === true) bad(`header ${name} is required by the document but missing`);
        continue;
      }
      if (!h.schema) continue;
      const validate = this.schema(`${hp}/schema`);
      const typed = h.schema.type === "integer" || h.schema.type === "number" ? Number(value) : value;
      if (!validate(typed)) bad(`header ${name}: '${value}' ${this.ajv.errorsText(validate.errors)}`);
    }
    const contentType = header(reply, "content-type");
    const mediaType = contentType?.split(";")[0]?.trim().toLowerCase();
    if (sentHead) {
      if (reply.body.length > 0) bad(`a HEAD answer with a body of ${reply.body.length} bytes`);
      return out;
    }
    const content: Record<string, Json> = response.content ?? {};
    if (reply.body.length === 0) {
      const bodiless = Array.isArray(response[NO_BODY]) && response[NO_BODY].length > 0;
      if (Object.keys(content).length > 0 && reply.status !== 204 && !bodiless)
        bad(`no body, where the document lists ${Object.keys(content).join(", ")}`);
      if (contentType !== undefined && Object.keys(content).length === 0) bad(`no body, yet Content-Type ${contentType}`);
      return out;
    }
    if (Object.keys(content).length === 0) return [...out, `${where} → ${reply.status}: a body the document does not list`];
    const documented = Object.keys(content).find((m) => m === mediaType) ?? Object.keys(content).find((m) => matchesRange(m, mediaType));
    if (!mediaType || !documented) {
      bad(`content-type ${contentType ?? "(none)"} not documented (lists ${Object.keys(content).join(", ")})`);
      return out;
    }
    const text = reply.body.toString("utf8");
    let value: unknown = text;
    if (mediaType === "application/json" || mediaType.endsWith("+json")) {
      try {
        value = JSON.parse(text);
      } catch {
        bad(`a ${mediaType} body that is not JSON: ${text.slice(0, 120)}`);
        return out;
      }
    }
    if (content[documented].schema === undefined) return out;
    const validate = this.schema(`${pointer}/content/${pointerSegment(documented)}/schema`);
    if (!validate(value)) bad(`body does not match the ${documented} schema: ${this.ajv.errorsText(validate.errors)}; body ${text.slice(0, 200)}`);
    return out;
  }

  private schema(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      // A JSON pointer in a URI fragment is percent-encoded ({path}, problem+json).
      validate = this.ajv.compile({ $ref: `${DOC_ID}#${pointer.split("/").map(encodeURIComponent).join("/")}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  private at(pointer: string): Json {
    let node = this.doc;
    for (const part of pointer.split("/").slice(1)) node = node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    return node;
  }

  /** An OpenAPI object, following its `$ref` (a shared response or header) to where it is written. */
  private resolve(pointer: string): { value: Json; pointer: string } {
    const value = this.at(pointer);
    if (typeof value?.$ref === "string" && value.$ref.startsWith("#")) return this.resolve(value.$ref.slice(1));
    return { value, pointer };
  }
}

function pointerSegment(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

function matchesRange(range: string, mediaType: string | undefined): boolean {
  if (!mediaType) return false;
  if (range === "*/*") return true;
  return range.endsWith("/*") && mediaType.startsWith(range.slice(0, -1));
}
