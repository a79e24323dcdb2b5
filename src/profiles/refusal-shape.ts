import type { RefusalGroup } from "../core/answer-shaper.js";
import { headerValueSafe, quotedStringSafe } from "../core/problem.js";
import type { CodeFile, RefusalFile, RefusalShapeFile } from "./schema.js";
import { compileTemplate, compileText, type Render, type TextRender } from "./template.js";
import { compileTextBody, DEFAULT_TEXT_CONTENT_TYPE } from "./text-body.js";

/**
 * One refusal's shape under a profile, the keys merged from the general to the specific:
 * `refusal`, then `refusal.groups.<group>`, then `codes.<code>` (each key of the more specific
 * wins; headers merge). Compiled once per (group, code) pair met, then kept: at most the four
 * groups and no group times the catalogue's codes.
 */
export interface RefusalShape {
  /** Whether the profile says anything about this refusal (else the sandbox's problem+json). */
  readonly shaped: boolean;
  readonly status: number | undefined;
  readonly code: string | number | undefined;
  /** The provider's text ({{message}}), rendered with the refusal's values. */
  readonly message: TextRender | undefined;
  readonly body: Render | undefined;
  /** A body that is not JSON (text-body.ts), instead of body. */
  readonly text: TextRender | undefined;
  readonly empty: boolean;
  readonly contentType: string | undefined;
  /** keep, omit, or the challenge template. */
  readonly challenge: "keep" | "omit" | TextRender;
  readonly headers: ReadonlyArray<readonly [string, TextRender]>;
}

export function refusalShapes(refusal: RefusalFile | undefined, codes: Readonly<Record<string, CodeFile>> | undefined) {
  const made = new Map<string, RefusalShape>();
  return (group: RefusalGroup | undefined, code: string): RefusalShape => {
    const key = `${group ?? ""}\0${code}`;
    let shape = made.get(key);
    if (!shape) {
      shape = compile(mergedRefusal(refusal, codes, group, code));
      made.set(key, shape);
    }
    return shape;
  };
}

/**
 * One layer as merged: a profile file's (RefusalShapeFile, a code's status and code), or one
 * calibrate is still writing (cli/calibrate/compare.ts), whose bodies are not yet typed as JSON.
 */
type Layer = Omit<RefusalShapeFile, "body"> & Partial<Pick<CodeFile, "status" | "code">> & { readonly body?: unknown };

/** The keys of one refusal's layers merged, as written (templates not compiled): the runtime and the OpenAPI document read the same merge. */
export interface MergedRefusal {
  readonly shaped: boolean;
  readonly status: number | undefined;
  readonly code: string | number | undefined;
  readonly message: string | undefined;
  readonly body: unknown;
  readonly text: string | undefined;
  readonly empty: boolean;
  readonly contentType: string | undefined;
  /** keep (also when no layer says), omit, or the challenge template. */
  readonly challenge: string;
  /** Lower-case names, the more specific layer's value winning. */
  readonly headers: ReadonlyMap<string, string>;
}

/** The layers of one refusal, general to specific: `refusal`, its group's, the code's. */
export function mergedRefusal(
  refusal: (Layer & { readonly groups?: Partial<Readonly<Record<RefusalGroup, Layer>>> }) | undefined,
  codes: Readonly<Record<string, Layer>> | undefined,
  group: RefusalGroup | undefined,
  code: string,
): MergedRefusal {
  return merge([refusal, group && refusal?.groups?.[group], codes?.[code]]);
}

function merge(layers: ReadonlyArray<Layer | undefined>): MergedRefusal {
  let body: unknown;
  let text: string | undefined;
  let empty = false;
  let contentType: string | undefined;
  let challenge: string | undefined;
  let status: number | undefined;
  let code: string | number | undefined;
  let message: string | undefined;
  const headers = new Map<string, string>();
  let shaped = false;
  for (const layer of layers) {
    if (!layer) continue;
    shaped = true;
    // A body, a text body and `empty` replace each other: the more specific layer's choice wins.
    if (layer.body !== undefined) {
      body = layer.body;
      text = undefined;
      empty = false;
    }
    if (layer.text !== undefined) {
      text = layer.text;
      body = undefined;
      empty = false;
    }
    if (layer.empty) {
      empty = true;
      body = undefined;
      text = undefined;
    }
    contentType = layer.contentType ?? contentType;
    challenge = layer.wwwAuthenticate ?? challenge;
    status = layer.status ?? status;
    code = layer.code ?? code;
    message = layer.message ?? message;
    for (const [name, value] of Object.entries(layer.headers ?? {})) headers.set(name.toLowerCase(), value);
  }
  return { shaped, status, code, message, body, text, empty, contentType, challenge: challenge ?? "keep", headers };
}

function compile(merged: MergedRefusal): RefusalShape {
  const { message, body, challenge } = merged;
  return {
    ...merged,
    message: message === undefined ? undefined : compileText(message),
    body: body === undefined ? undefined : compileTemplate(body),
    text: merged.text === undefined ? undefined : compileTextBody(merged.text, merged.contentType ?? DEFAULT_TEXT_CONTENT_TYPE),
    challenge:
      challenge === "keep" || challenge === "omit"
        ? challenge
        : compileText(challenge, quotedStringSafe) /* RFC 6750 quoted-string: no value can break the header */,
    headers: [...merged.headers].map(([name, value]) => [name, compileText(value, headerValueSafe)] as const),
  };
}
