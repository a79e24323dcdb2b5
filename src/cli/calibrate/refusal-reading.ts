import { STATUS_CODES } from "node:http";
import { type CatalogueCode, ERROR_CATALOGUE } from "../../core/error-catalogue.js";
import { REALM } from "../../core/problem.js";
import { headerTemplates } from "./answer-headers.js";
import { isObject, keyOf, leaves, mapLeaves, type Path, pathText } from "./json-paths.js";
import { type Group, type Observation, PROBE_CODES, PROBE_GROUPS, type ProbeName } from "./observations.js";
import { isEmpty, nowPlaceholder, perRequestByShape, perRequestPlaceholder, timesInText, type Varying } from "./per-request.js";
import type { RequestIdShape } from "../../profiles/request-id.js";
import { withoutCredentials } from "./credentials.js";

/**
 * One refusal the provider answered, read whole (refusals.ts factors them): its status, the
 * provider's code (the member that carries it, providerCodePath), its message text, its body as a
 * template, its content type, its challenge and its headers.
 */

export interface RefusalContext {
  varying: Varying;
  nowS: number;
  expiredExp: number | undefined;
  /** Headers every answer carries (the profile-wide ones): not repeated per refusal. */
  wide: Map<string, string>;
  /** Whether the OAuth `error` differs between refusals (then it tracks the code: {{error}}); set here. */
  errorVaries?: boolean;
  /** Body members with one value in every refusal that has them (two at least): constants, never the message. */
  constants?: ReadonlySet<string>;
  /** The request-id shapes met (the profile's `requestId`); added to here. */
  requestIds?: Set<RequestIdShape>;
}

/** One observed refusal, whole. */
export interface Full {
  probe: ProbeName;
  code: CatalogueCode;
  group: Group;
  status: number;
  providerCode?: string | number;
  message?: string;
  /** Body template, a text body's template (not JSON), or `empty`. */
  payload?: { body: unknown } | { text: string } | { empty: true };
  contentType?: string;
  wwwAuthenticate: string;
  headers: Map<string, string>;
  notes: string[];
}

const MESSAGE_KEYS = ["message", "detail", "error_description", "description", "errorMessage", "error_message", "msg"];
const CODE_LIKE = /^[A-Za-z][A-Za-z0-9]*(?:[_.:-][A-Za-z0-9]+)*$/;

/** The leaf that carries the provider's own error code: code-like, differing between refusals, best under a code-ish name. */
export function providerCodePath(refused: readonly Observation[], ctx: RefusalContext): string | undefined {
  const values = new Map<string, unknown[]>();
  for (const o of refused) {
    const code = PROBE_CODES[o.probe]!;
    const message = messageOf(o);
    for (const { path, value } of leaves(isObject(o.answer.json) ? o.answer.json : undefined)) {
      const p = pathText(path);
      const codeLike = (typeof value === "string" && CODE_LIKE.test(value)) || (Number.isInteger(value) && value !== o.answer.status);
      const other =
        value === message ||
        value === STATUS_CODES[o.answer.status] ||
        (ERROR_CATALOGUE[code].error as readonly unknown[]).includes(value) ||
        ctx.varying.keys.has(keyOf(path));
      // A member that is the status or the message here may still be the code elsewhere (Lexik's login {code: 401}).
      if (codeLike && !other) values.set(p, [...(values.get(p) ?? []), value]);
    }
  }
  const candidates = [...values]
    .map(([p, vs]) => ({ p, distinct: new Set(vs).size, named: /code/i.test(p.split(".").pop() ?? "") }))
    .filter((c) => c.distinct > 1 || c.named)
    .sort((a, b) => Number(b.named) - Number(a.named) || b.distinct - a.distinct);
  return candidates[0]?.p;
}

export function constantPaths(refused: readonly Observation[]): Set<string> {
  const seen = new Map<string, Set<string>>();
  const count = new Map<string, number>();
  for (const o of refused) {
    for (const l of leaves(isObject(o.answer.json) ? o.answer.json : undefined)) {
      const p = pathText(l.path);
      seen.set(p, (seen.get(p) ?? new Set()).add(JSON.stringify(l.value)));
      count.set(p, (count.get(p) ?? 0) + 1);
    }
  }
  return new Set([...seen].filter(([p, values]) => values.size === 1 && count.get(p)! >= 2).map(([p]) => p));
}

/** The OAuth error values (the sandbox's own for each code) the refusals carry, in bodies and challenges. */
export function oauthErrorsSeen(refused: readonly Observation[]): Set<unknown> {
  const seen = new Set<unknown>();
  for (const o of refused) {
    const errors = ERROR_CATALOGUE[PROBE_CODES[o.probe]!].error as readonly unknown[];
    for (const l of leaves(isObject(o.answer.json) ? o.answer.json : undefined)) if (errors.includes(l.value)) seen.add(l.value);
    const param = challengeParams(o.answer.headers["www-authenticate"]).get("error");
    if (errors.includes(param)) seen.add(param);
  }
  return seen;
}

/** The provider's human text for a refusal: the body's message member, else the challenge's error_description. */
export function messageOf(o: Observation, constants: ReadonlySet<string> = new Set()): string | undefined {
  const json = o.answer.json;
  const status = STATUS_CODES[o.answer.status];
  if (isObject(json)) {
    const all = leaves(json).filter((l) => !constants.has(pathText(l.path)));
    for (const key of MESSAGE_KEYS) {
      const hit = all.find((l) => keyOf(l.path) === key && typeof l.value === "string" && l.value !== "" && l.value !== status);
      if (hit) return hit.value as string;
    }
    const sentence = all
      .map((l) => l.value)
      .filter((v): v is string => typeof v === "string" && /[A-Za-z]/.test(v) && /\s/.test(v.trim()) && v !== status)
      .sort((a, b) => b.length - a.length)[0];
    if (sentence) return sentence;
  }
  return challengeParams(o.answer.headers["www-authenticate"]).get("error_description") ?? textMessage(o.answer);
}

/** The message of a body that is not JSON: an HTML page's title, or a one-line text (Go's http.Error). */
function textMessage(a: Observation["answer"]): string | undefined {
  const text = a.text?.trim();
  if (!text) return undefined;
  if (/html/i.test(a.contentType ?? "")) return /<title>([^<]{1,200})<\/title>/i.exec(text)?.[1]?.trim();
  return text.includes("\n") || text.length > 500 ? undefined : text;
}

/**
 * A body that is not JSON as a profile's text template: the message {{message}}, times the moments
 * they stand for; undefined when the text holds `{{` (a page with templates of its own: the
 * placeholders would misread it).
 */
export function textTemplate(
  text: string,
  message: string | undefined,
  moments: ReadonlyArray<{ name: string; seconds: number | undefined }>,
): string | undefined {
  if (text.includes("{{")) return undefined;
  const timed = timesInText(text, moments);
  return message === undefined || message === "" ? timed : timed.split(message).join("{{message}}");
}

function challengeParams(challenge: string | undefined): Map<string, string> {
  const params = new Map<string, string>();
  for (const m of (challenge ?? "").matchAll(/([A-Za-z_]+)="([^"]*)"/g)) params.set(m[1]!, m[2]!);
  return params;
}

export function wholeRefusal(o: Observation, codePath: string | undefined, ctx: RefusalContext): Full {
  const code = PROBE_CODES[o.probe]!;
  const a = o.answer;
  const notes: string[] = [];
  const text = messageOf(o, ctx.constants);
  const errors = ERROR_CATALOGUE[code].error as readonly unknown[];
  const json = isObject(a.json) || Array.isArray(a.json) ? a.json : undefined;
  const codeValue = codePath === undefined ? undefined : leaves(json).find((l) => pathText(l.path) === codePath)?.value;
  // The provider is a merchant-sandbox: its text is the sandbox's explanation, which {{message}} renders by default.
  // The provider is a merchant-sandbox (calibrate run against one): it says so in its header or its codes.
  const isSandbox = a.headers["x-sandbox-explanation"] !== undefined || codeValue === code;
  const sandboxText = text !== undefined && isSandbox && (a.headers["x-sandbox-explanation"] === text || codeValue === code);
  const moments = [
    { name: "token_expires_at", seconds: o.probe === "expired_token" ? ctx.expiredExp : undefined },
    { name: "now", seconds: ctx.nowS },
  ];
  const message = text === undefined || sandboxText ? undefined : timesInText(text, moments);
  const leaf = (path: Path, v: unknown): unknown => {
    if (typeof v === "number" && v === a.status) return "{{status}}";
    const per = (ctx.varying.keys.has(keyOf(path)) ? perRequestPlaceholder(v, ctx.nowS) : undefined) ?? perRequestByShape(v);
    if (per) {
      if (per.requestId) ctx.requestIds?.add(per.requestId);
      return per.placeholder;
    }
    const now = nowPlaceholder(v, ctx.nowS);
    if (now) return now;
    if (typeof v !== "string") return pathText(path) === codePath && v !== undefined ? "{{code}}" : v;
    if (v === text) return "{{message}}";
    if (v === STATUS_CODES[a.status]) return "{{status_text}}";
    if (o.path !== undefined && v === o.path) return keyOf(path) === "instance" ? "{{instance}}" : "{{path}}";
    if (pathText(path) === codePath) return "{{code}}";
    if (ctx.errorVaries && errors.includes(v)) return "{{error}}";
    if (v.includes(code)) return v.split(code).join("{{sandbox_code}}");
    if (text !== undefined && v.includes(text)) return v.split(text).join("{{message}}");
    return v;
  };
  let payload: Full["payload"];
  const asText = a.text === undefined ? undefined : textTemplate(withoutCredentials(a.text).text, message, moments);
  if (isEmpty(a)) payload = { empty: true };
  else if (json !== undefined) payload = { body: mapLeaves(json, leaf) };
  else if (asText !== undefined) payload = { text: asText };
  else notes.push("the body is neither JSON nor text calibrate can template: only its status, challenge and headers are reproduced");
  return {
    probe: o.probe,
    code,
    group: PROBE_GROUPS[o.probe],
    status: a.status,
    ...((typeof codeValue === "string" || (typeof codeValue === "number" && codeValue !== a.status)) &&
      codeValue !== code && { providerCode: codeValue }),
    ...(message !== undefined && { message }),
    ...(payload && { payload }),
    ...(payload && "body" in payload && { contentType: a.contentType ?? "application/json" }),
    ...(payload && "text" in payload && { contentType: a.headers["content-type"] ?? "text/plain" }),
    wwwAuthenticate: challengeTemplate(a.headers["www-authenticate"], text, ctx.errorVaries ? errors : [], moments, isSandbox),
    headers: withoutWide(headerTemplates(a, ctx.varying, ctx.nowS), ctx.wide),
    notes,
  };
}

/** The challenge as a template: its error_description {{message}} when it is the message, its error {{error}} when the sandbox's. */
function challengeTemplate(
  challenge: string | undefined,
  text: string | undefined,
  errors: readonly unknown[],
  moments: ReadonlyArray<{ name: string; seconds: number | undefined }>,
  isSandbox: boolean,
): string {
  if (challenge === undefined) return "omit";
  // The sandbox's own challenge (a sandbox calibrated): `keep` gives each code its own, as it did.
  if (isSandbox && new RegExp(`^(Bearer|ApiKey) realm="${REALM}"(,|$)`).test(challenge)) return "keep";
  return challenge.replace(/([A-Za-z_]+)="([^"]*)"/g, (whole, name: string, value: string) => {
    if (name === "error_description") return value === text ? `${name}="{{message}}"` : `${name}="${timesInText(value, moments)}"`;
    if (name === "error" && errors.includes(value)) return `${name}="{{error}}"`;
    return whole;
  });
}

function withoutWide(h: Map<string, string>, wide: Map<string, string>): Map<string, string> {
  return new Map([...h].filter(([n, v]) => wide.get(n) !== v));
}
