import { InvalidRequest, PayloadTooLarge, UnsupportedMediaType } from "./errors.js";
import { headerValue, type SandboxRequest } from "./http-types.js";
import { echo } from "./echo.js";

/**
 * Reading a JSON request body, with the refusals of docs/architecture.md: 413 past the size limit,
 * 415 for a body that is not declared as JSON, 400 for JSON that does not parse or is not an object.
 */

const decoder = new TextDecoder("utf-8", { fatal: true });

export function assertBodySize(request: SandboxRequest, maxBodyBytes: number): void {
  if (request.body.byteLength > maxBodyBytes) {
    throw new PayloadTooLarge(`The request body is larger than ${maxBodyBytes} bytes. Send only the fields the endpoint expects.`);
  }
}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

/**
 * The body as a JSON object, or undefined when there is no body. A body not declared as JSON
 * (`Content-Type: application/json` or `application/*+json`) is a 415 with `strictContentType`;
 * otherwise it is not read at all, whatever it holds (payment/init, whose payload the spec leaves
 * open): a client that forgets the header must not have its fields taken as if it had sent it.
 */
export interface JsonBodyOptions {
  strictContentType: boolean;
  endpoint: string;
  /** The endpoint's own body, shown in the malformed-JSON message, e.g. `{"username": "...", "password": "..."}`. */
  example: string;
}

export function readJsonObject(request: SandboxRequest, body: RequestBody, options: JsonBodyOptions): Record<string, unknown> | undefined {
  if (request.body.byteLength === 0) return undefined;
  const contentType = headerValue(request, "content-type");
  const declaredJson = isJsonContentType(contentType);
  if (!declaredJson) {
    if (!options.strictContentType) return undefined;
    // What OAuth client libraries (and curl -d) send by default: show the JSON to send instead.
    const form = formMediaType(contentType);
    if (form) {
      throw new UnsupportedMediaType(
        `${options.endpoint} takes a JSON body, but this one is form-encoded (Content-Type: ${form}). Send the fields as a JSON object instead, with the header 'Content-Type: application/json': ${options.example}.`,
      );
    }
    throw new UnsupportedMediaType(
      `${options.endpoint} takes a JSON body, but the request says Content-Type: ${printableType(contentType)}. Send the body as JSON with the header 'Content-Type: application/json'.`,
    );
  }
  const decoded = body.decoded();
  if (decoded.kind === "not_utf8") {
    throw new InvalidRequest("body_not_utf8", `The request body is not valid UTF-8. Send the JSON body encoded as UTF-8.`);
  }
  if (decoded.kind === "malformed") {
    throw new InvalidRequest(
      "body_malformed_json",
      `The request body is not valid JSON${syntaxPosition(decoded.error)}. Send a JSON object such as ${options.example}.`,
    );
  }
  const parsed = decoded.value;
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`;
    throw new InvalidRequest("body_not_object", `The request body is ${kind}; ${options.endpoint} takes a JSON object.`);
  }
  return parsed as Record<string, unknown>;
}

export type DecodedBody = { kind: "ok"; value: unknown } | { kind: "not_utf8" } | { kind: "malformed"; error: unknown };

/**
 * A request's body, decoded as UTF-8 JSON at most once, by whichever reads it first: attribution
 * (to see whose credentials are in it) or the endpoint. The pipeline makes one per request and
 * carries it on the trace, so the decode is shared without any state outside the request.
 */
export class RequestBody {
  private decodedBody: DecodedBody | undefined;

  constructor(readonly bytes: Uint8Array) {}

  decoded(): DecodedBody {
    this.decodedBody ??= decodeJson(this.bytes);
    return this.decodedBody;
  }
}

function decodeJson(body: Uint8Array): DecodedBody {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    return { kind: "not_utf8" };
  }
  try {
    return { kind: "ok", value: JSON.parse(text) };
  } catch (error) {
    return { kind: "malformed", error };
  }
}

/** `application/x-www-form-urlencoded` or `multipart/form-data`, whatever parameters follow; else undefined. */
function formMediaType(contentType: string | undefined): string | undefined {
  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/x-www-form-urlencoded" || mediaType === "multipart/form-data" ? mediaType : undefined;
}

function printableType(contentType: string | undefined): string {
  if (!contentType) return "(none)";
  return echo(contentType, 100);
}

/**
 * Where JSON.parse gave up, without its message: V8 quotes a slice of the input there, and the
 * input may hold a secret.
 */
function syntaxPosition(e: unknown): string {
  const m = /position (\d+)/.exec(String((e as Error)?.message));
  return m ? ` (syntax error at position ${m[1]})` : "";
}
