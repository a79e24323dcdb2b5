import { STATUS_CODES } from "node:http";
import { type CatalogueCode, ERROR_CATALOGUE } from "../../core/error-catalogue.js";
import { REALM } from "../../core/problem.js";
import { headerTemplates } from "./answer-headers.js";
import { isObject, keyOf, leaves, mapLeaves, type Path, pathText } from "./json-paths.js";
import { type Group, INFERRED_CODES, type Observation, PROBE_CODES, PROBE_GROUPS, type ProbeName } from "./observations.js";
import { isEmpty, nowPlaceholder, perRequestPlaceholder, timesInText, type Varying } from "./per-request.js";

/**
 * The refusals a profile writes, from the refusals the provider answered: each observed one
 * reproduced whole (status, the provider's code, its message text, its body or no body, its
 * content type, its challenge, its headers), then factored so the file stays short: what most
 * refusals share goes to `refusal`, what most of one endpoint group's share to
 * `refusal.groups.<group>`, the rest to `codes.<code>`. Codes no probe observed take the answer of
 * the nearest one that was (observations.ts, INFERRED_CODES). Pure.
 */

export interface RefusalEntry {
  code?: string | number;
  status?: number;
  message?: string;
  contentType?: string;
  body?: unknown;
  empty?: true;
  wwwAuthenticate?: string;
  headers?: Record<string, string>;
}

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
}

/** One observed refusal, whole. */
interface Full {
  probe: ProbeName;
  code: CatalogueCode;
  group: Group;
  status: number;
  providerCode?: string | number;
  message?: string;
  /** Body template, `empty`, or neither (a body that is not JSON: only the rest is reproduced). */
  payload?: { body: unknown } | { empty: true };
  contentType?: string;
  wwwAuthenticate: string;
  headers: Map<string, string>;
  notes: string[];
}

export interface RefusalInference {
  refusal?: RefusalEntry & { groups?: Partial<Record<Group, RefusalEntry>> };
  codes: Record<string, RefusalEntry>;
  /** Per observed probe (and per inferred code): what the profile now says, and how. */
  lines: Array<{ probe: ProbeName | "(inferred)"; code: string; says: string; note?: string; from?: ProbeName }>;
}

const MESSAGE_KEYS = ["message", "detail", "error_description", "description", "errorMessage", "error_message", "msg"];
const CODE_LIKE = /^[A-Za-z][A-Za-z0-9]*(?:[_.:-][A-Za-z0-9]+)*$/;

export function inferRefusals(observed: readonly Observation[], repeats: readonly Observation[], given: RefusalContext): RefusalInference {
  let ctx = given;
  const lines: RefusalInference["lines"] = [];
  const refused = observed.filter((o) => PROBE_CODES[o.probe] && o.answer.status >= 300);
  for (const o of observed) {
    if (PROBE_CODES[o.probe] && o.answer.status < 300)
      lines.push({
        probe: o.probe,
        code: PROBE_CODES[o.probe]!,
        says: "nothing: the provider did not refuse it",
        note: "the sandbox refuses it anyway",
      });
  }
  if (refused.length === 0) return { codes: {}, lines };
  const codePath = providerCodePath(refused, ctx);
  ctx = { ...ctx, errorVaries: oauthErrorsSeen(refused).size > 1, constants: constantPaths(refused) };
  const fulls = refused.map((o) => {
    const full = wholeRefusal(o, codePath, ctx);
    const again = repeats.find((r) => r.probe === o.probe);
    if (again && full.message !== undefined && wholeRefusal(again, codePath, ctx).message !== full.message) {
      full.notes.push("its text differed between two identical calls: the sandbox's explanation is sent instead");
      delete full.message;
    }
    return full;
  });

  // What most refusals share, then what most of each group's share.
  const global = sharedOf(fulls);
  const groups: Partial<Record<Group, RefusalEntry>> = {};
  const groupShared = new Map<Group, Shared>();
  for (const g of ["token", "protected", "paymentInit", "login"] as const) {
    const members = fulls.filter((f) => f.group === g);
    const shared = members.length > 0 ? sharedOf(members) : global;
    const effective = { ...global, ...shared, headers: new Map([...global.headers, ...shared.headers]) };
    groupShared.set(g, effective);
    const entry = entryOf(effective, global);
    if (Object.keys(entry).length > 0) groups[g] = entry;
  }
  const codes: Record<string, RefusalEntry> = {};
  for (const f of fulls) {
    const entry = codeEntry(f, groupShared.get(f.group)!, f.code);
    if (Object.keys(entry).length > 0) codes[f.code] = entry;
    lines.push({ probe: f.probe, code: f.code, says: entryText(f.code, entry), ...(f.notes.length > 0 && { note: f.notes.join("; ") }) });
  }
  for (const i of INFERRED_CODES) {
    if (fulls.some((f) => f.code === i.code)) continue;
    const source = i.from.map((p) => fulls.find((f) => f.probe === p)).find((f) => f !== undefined);
    if (!source) continue;
    const group = groupOfCode(i.code, source.group);
    // Another group's answers have that group's shape: only the source's status, code and text travel.
    const entry = codeEntry(
      group === source.group
        ? source
        : {
            ...source,
            payload: undefined,
            contentType: undefined,
            wwwAuthenticate: groupShared.get(group)!.wwwAuthenticate ?? "omit",
            headers: new Map(),
          },
      groupShared.get(group)!,
      i.code,
    );
    if (Object.keys(entry).length > 0) codes[i.code] = entry;
    lines.push({ probe: "(inferred)", code: i.code, says: entryText(i.code, entry), note: `${i.why} (${source.probe})`, from: source.probe });
  }
  const top = entryOf(global, undefined);
  return {
    refusal: { ...top, ...(Object.keys(groups).length > 0 && { groups }) },
    codes,
    lines,
  };
}

/** The group an inferred code is answered in: its own endpoints', else its source's. */
function groupOfCode(code: CatalogueCode, fallback: Group): Group {
  if (code.startsWith("login_")) return "login";
  if (code.startsWith("payment_token_")) return "paymentInit";
  return fallback;
}

interface Shared {
  payload?: Full["payload"];
  contentType?: string;
  wwwAuthenticate?: string;
  headers: Map<string, string>;
}

/** The most common payload, content type and challenge of these refusals, and the headers all of them carry. */
function sharedOf(fulls: readonly Full[]): Shared {
  const withPayload = fulls.filter((f) => f.payload !== undefined);
  const payload = mostCommon(withPayload.map((f) => f.payload));
  const contentType = mostCommon(fulls.filter((f) => f.contentType !== undefined).map((f) => f.contentType));
  const wwwAuthenticate = mostCommon(fulls.map((f) => f.wwwAuthenticate));
  const headers = new Map(fulls[0]!.headers);
  for (const f of fulls.slice(1)) for (const [n, v] of headers) if (f.headers.get(n) !== v) headers.delete(n);
  return {
    ...(payload !== undefined && { payload }),
    ...(contentType !== undefined && { contentType }),
    ...(wwwAuthenticate !== undefined && { wwwAuthenticate }),
    headers,
  };
}

/** `shared` as a profile layer, without what `over` (the layer above) already says. */
function entryOf(shared: Shared, over: Shared | undefined): RefusalEntry {
  const entry: RefusalEntry = {};
  const differs = (a: unknown, b: unknown) => over === undefined || JSON.stringify(a) !== JSON.stringify(b);
  if (shared.contentType !== undefined && differs(shared.contentType, over?.contentType)) entry.contentType = shared.contentType;
  if (shared.payload !== undefined && differs(shared.payload, over?.payload)) Object.assign(entry, shared.payload);
  if (shared.wwwAuthenticate !== undefined && differs(shared.wwwAuthenticate, over?.wwwAuthenticate)) entry.wwwAuthenticate = shared.wwwAuthenticate;
  const headers = [...shared.headers].filter(([n, v]) => over?.headers.get(n) !== v);
  if (headers.length > 0) entry.headers = Object.fromEntries(headers.map(([n, v]) => [headerName(n), v]));
  return entry;
}

/** One refusal's entry under `codes`: what its group's shared shape does not already say. */
function codeEntry(f: Full, group: Shared, code: CatalogueCode): RefusalEntry {
  const own = entryOf(
    {
      ...(f.payload && { payload: f.payload }),
      ...(f.contentType && { contentType: f.contentType }),
      wwwAuthenticate: f.wwwAuthenticate,
      headers: f.headers,
    },
    group,
  );
  // A group's header a refusal lacks cannot be taken away; rare enough to say so rather than model it.
  return {
    ...(f.providerCode !== undefined && { code: f.providerCode }),
    ...(ERROR_CATALOGUE[code].status[0] !== f.status && { status: f.status }),
    ...(f.message !== undefined && { message: f.message }),
    ...own,
  };
}

function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());
}

/** The leaf that carries the provider's own error code: code-like, differing between refusals, best under a code-ish name. */
function providerCodePath(refused: readonly Observation[], ctx: RefusalContext): string | undefined {
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

function constantPaths(refused: readonly Observation[]): Set<string> {
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
function oauthErrorsSeen(refused: readonly Observation[]): Set<unknown> {
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
function messageOf(o: Observation, constants: ReadonlySet<string> = new Set()): string | undefined {
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
  return challengeParams(o.answer.headers["www-authenticate"]).get("error_description");
}

function challengeParams(challenge: string | undefined): Map<string, string> {
  const params = new Map<string, string>();
  for (const m of (challenge ?? "").matchAll(/([A-Za-z_]+)="([^"]*)"/g)) params.set(m[1]!, m[2]!);
  return params;
}

function wholeRefusal(o: Observation, codePath: string | undefined, ctx: RefusalContext): Full {
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
    if (ctx.varying.keys.has(keyOf(path))) {
      const per = perRequestPlaceholder(v, ctx.nowS);
      if (per) return per.placeholder;
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
  if (isEmpty(a)) payload = { empty: true };
  else if (json !== undefined) payload = { body: mapLeaves(json, leaf) };
  else notes.push("the body is not JSON: only its status, challenge and headers are reproduced");
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

function mostCommon<T>(values: readonly T[]): T | undefined {
  const counts = new Map<string, { value: T; n: number }>();
  for (const v of values) {
    const key = JSON.stringify(v);
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { value: v, n: 1 });
  }
  let best: { value: T; n: number } | undefined;
  for (const c of counts.values()) if (!best || c.n > best.n) best = c;
  return best?.value;
}

export function entryText(code: string, entry: RefusalEntry): string {
  const parts = [
    entry.status !== undefined && `status ${entry.status}`,
    entry.code !== undefined && `code ${entry.code}`,
    entry.message !== undefined && `message "${entry.message}"`,
    entry.empty && "no body",
    entry.body !== undefined && "a body of its own",
    entry.wwwAuthenticate !== undefined && `challenge ${entry.wwwAuthenticate}`,
    entry.headers !== undefined && `headers ${Object.keys(entry.headers).join(", ")}`,
  ].filter(Boolean);
  return `codes.${code}: ${parts.join(", ") || "as its group's refusal"}`;
}
