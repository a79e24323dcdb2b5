import { type CatalogueCode, ERROR_CATALOGUE } from "../../core/error-catalogue.js";
import { parseDurationSeconds } from "../../core/duration.js";
import { mergedRefusal } from "../../profiles/refusal-shape.js";
import type { CalibratedProfile } from "./infer.js";
import { leewayDrift, readLeeway } from "./leeway.js";
import { isObject, leaves, pathText } from "./json-paths.js";
import { type Group, type Observations, PROBE_CODES, PROBE_GROUPS, type ProbeName } from "./observations.js";

/**
 * `calibrate --check`: the profile on file against the one the provider's answers give today,
 * answer by answer as a client sees it (whatever layer of either file says it): status, code,
 * message text, challenge, body or no body, content type, each body member, each header. Both
 * sides are templates, so per-request values are compared by their placeholder (their shape),
 * never by value. Pure. Only what this run observed is compared (a section calibrate did not
 * probe this time, such as payment/init without --allow-writes, is not a difference).
 */

export interface Difference {
  where: string;
  profile: string;
  provider: string;
}

export function compareProfiles(storedFile: unknown, freshFile: CalibratedProfile, obs: Observations): Difference[] {
  const s = (isObject(storedFile) ? sameKinds(storedFile) : {}) as Partial<CalibratedProfile>;
  const fresh = sameKinds(freshFile) as CalibratedProfile;
  const out: Difference[] = [];
  const same = (where: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ where, profile: show(a), provider: show(b) });
  };
  same("requestId", s.requestId ?? "uuid", fresh.requestId ?? "uuid");
  for (const o of obs.observed) {
    const part = SUCCESS_PARTS[o.probe];
    if (part && fresh[part] !== undefined) {
      out.push(...effectiveDifferences(part, answerOf(s, part), answerOf(fresh, part)));
      continue;
    }
    const code = PROBE_CODES[o.probe];
    if (!code || o.answer.status < 300) continue;
    const group = PROBE_GROUPS[o.probe];
    out.push(...effectiveDifferences(`codes.${code}`, refusalOf(s, group, code), refusalOf(fresh, group, code)));
  }
  const jwt = fresh.jwt ?? {};
  const was = s.jwt ?? {};
  for (const key of [
    "alg",
    "typ",
    "kid",
    "headerOrder",
    "issuer",
    "audience",
    "merchantClaim",
    "merchantValue",
    "clientClaim",
    "scopeClaim",
    "claims",
  ] as const) {
    if (jwt[key] !== undefined) same(`jwt.${key}`, was[key] ?? JWT_DEFAULTS[key], jwt[key]);
  }
  if (jwt.ttl !== undefined) same("jwt.ttl", seconds(was.ttl), seconds(jwt.ttl));
  // Only a run that sent --expired-token reads the leeway, and only as far as its answer tells.
  const reading = readLeeway(obs);
  const drift = reading && leewayDrift(leewaySeconds(was.leeway), reading);
  if (drift) out.push({ where: "jwt.leeway", ...drift });
  return mergeAcrossCodes(out);
}

/**
 * A time with a fraction finer than milliseconds is one kind, however many digits this call
 * printed: Go trims trailing zeros (8 digits one time in ten), and one run of a provider may print
 * 6, 7 or 9. Compared so, never written so.
 */
function sameKinds<T>(profile: T): T {
  return JSON.parse(JSON.stringify(profile).replace(/:rfc3339-(?:us|100ns|ns|nano)\}\}/g, ":rfc3339-fine}}")) as T;
}

const JWT_DEFAULTS: Record<string, unknown> = {
  alg: "(the sandbox's default)",
  typ: "at+jwt",
  kid: true,
  issuer: "(the sandbox's default)",
  audience: "(the sandbox's default)",
  merchantClaim: "sub",
  merchantValue: "merchant_id",
  claims: "(none)",
  headerOrder: "(the sandbox's order)",
  clientClaim: "client_id",
  scopeClaim: "scope",
};

/** Which probe's success each answer of a profile is. */
const SUCCESS_PARTS: Partial<Record<ProbeName, "token" | "login" | "protected" | "paymentInit">> = {
  token_body: "token",
  login: "login",
  protected_fresh: "protected",
  payment_init: "paymentInit",
};
const DEFAULT_STATUS = { token: 200, login: 200, protected: 200, paymentInit: 201 } as const;

/** One answer as a client sees it: what --check compares, whatever layer of the file said it. */
interface Effective {
  status: number;
  code?: string | number | undefined;
  message?: string;
  empty: boolean;
  contentType: string;
  challenge?: string;
  headers: Map<string, string>;
  /** The body template; undefined: the sandbox's own body. */
  body: unknown;
}

function lowerHeaders(...layers: Array<Record<string, string> | undefined>): Map<string, string> {
  const out = new Map<string, string>();
  for (const layer of layers) for (const [n, v] of Object.entries(layer ?? {})) out.set(n.toLowerCase(), v);
  return out;
}

function answerOf(p: Partial<CalibratedProfile>, part: keyof typeof DEFAULT_STATUS): Effective {
  const a = p[part];
  return {
    status: a?.status ?? DEFAULT_STATUS[part],
    empty: a?.empty === true,
    contentType: a?.contentType ?? "application/json",
    headers: lowerHeaders(p.headers, a?.headers),
    body: a?.text !== undefined ? { text: a.text } : a?.body,
  };
}

/** A refusal's effective shape: its layers merged as the runtime merges them (refusal-shape.ts), over the sandbox's. */
function refusalOf(p: Partial<CalibratedProfile>, group: Group, code: CatalogueCode): Effective {
  const merged = mergedRefusal(p.refusal, p.codes, group, code);
  return {
    status: merged.status ?? ERROR_CATALOGUE[code].status[0],
    code: merged.code ?? "(the sandbox's code)",
    message: merged.message ?? "(the sandbox's explanation)",
    empty: merged.empty,
    contentType: merged.contentType ?? "application/problem+json",
    challenge: merged.challenge,
    headers: new Map([...lowerHeaders(p.headers), ...merged.headers]),
    body: merged.text !== undefined ? { text: merged.text } : merged.body,
  };
}

/** Whether the answer carries its message text: in its body (the sandbox's own body does) or its challenge. */
function showsMessage(e: Effective): boolean {
  if (e.message === undefined) return false;
  const inBody = !e.empty && (e.body === undefined || JSON.stringify(e.body).includes("{{message}}"));
  return inBody || e.challenge === "keep" || (e.challenge?.includes("{{message}}") ?? false);
}

/** One line per thing a client could branch on that differs. */
function effectiveDifferences(where: string, was: Effective, now: Effective): Difference[] {
  const out: Difference[] = [];
  const same = (what: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ where: `${where}.${what}`, profile: show(a), provider: show(b) });
  };
  same("status", was.status, now.status);
  same("code", was.code, now.code);
  // A text no part of either answer shows (an empty body with a bare challenge) is nothing a client sees.
  if (showsMessage(was) && showsMessage(now)) same("message", was.message, now.message);
  same("wwwAuthenticate", was.challenge, now.challenge);
  if (was.empty !== now.empty) {
    out.push({ where: `${where}.body`, profile: was.empty ? "no body" : "a body", provider: now.empty ? "no body (empty)" : "a body" });
  } else if (!now.empty) {
    same("contentType", was.contentType, now.contentType);
    if (was.body === undefined || now.body === undefined)
      same("body", was.body ?? "(the sandbox's own body)", now.body ?? "(the sandbox's own body)");
    else out.push(...bodyDifferences(`${where}.body`, was.body, now.body));
  }
  // The code now in a body member (Lexik's `code` from the status to 4011): one change, said once.
  const codeLine = out.findIndex((d) => d.where === `${where}.code`);
  const bodyLine = out.findIndex((d) => d.where.startsWith(`${where}.body: `) && (d.provider === "{{code}}" || d.profile === "{{code}}"));
  if (codeLine >= 0 && bodyLine >= 0) {
    const body = out[bodyLine]!;
    const code = out[codeLine]!;
    out[bodyLine] = {
      ...body,
      profile: body.profile === "{{code}}" ? `{{code}} = ${code.profile}` : body.profile,
      provider: body.provider === "{{code}}" ? `{{code}} = ${code.provider}` : body.provider,
    };
    out.splice(codeLine, 1);
  }
  for (const [name, value] of now.headers) {
    if (!was.headers.has(name)) out.push({ where: `${where}.headers: ${name}`, profile: "(absent)", provider: `appeared: ${value}` });
    else if (was.headers.get(name) !== value) out.push({ where: `${where}.headers: ${name}`, profile: was.headers.get(name)!, provider: value });
  }
  for (const [name, value] of was.headers)
    if (!now.headers.has(name)) out.push({ where: `${where}.headers: ${name}`, profile: value, provider: "(gone)" });
  return out;
}

/** Leaf by leaf; a field gone and a new one with the same value is reported as a rename. */
export function bodyDifferences(where: string, was: unknown, now: unknown): Difference[] {
  const before = new Map(leaves(was).map((l) => [pathText(l.path), l.value]));
  const after = new Map(leaves(now).map((l) => [pathText(l.path), l.value]));
  const out: Difference[] = [];
  const added = [...after.keys()].filter((k) => !before.has(k));
  for (const [path, value] of before) {
    if (after.has(path)) {
      if (JSON.stringify(after.get(path)) !== JSON.stringify(value))
        out.push({ where: `${where}: ${path}`, profile: show(value), provider: show(after.get(path)) });
      continue;
    }
    const renamed = added.find((k) => JSON.stringify(after.get(k)) === JSON.stringify(value));
    if (renamed !== undefined) {
      added.splice(added.indexOf(renamed), 1);
      out.push({ where: `${where}: ${path}`, profile: `${path}: ${show(value)}`, provider: `renamed to ${renamed}` });
    } else {
      out.push({ where: `${where}: ${path}`, profile: `${path}: ${show(value)}`, provider: "(gone)" });
    }
  }
  for (const path of added) out.push({ where: `${where}: ${path}`, profile: "(absent)", provider: `${path}: ${show(after.get(path))}` });
  return mergeRenamedParents(where, out);
}

/** Every member of `data` renamed to the same member of `result`: one line, `data` renamed to `result`. */
function mergeRenamedParents(where: string, lines: Difference[]): Difference[] {
  const parentOf = (path: string) => path.replace(/(\.[^.[\]]+|\[\d+\])$/, "");
  const groups = new Map<string, Difference[]>();
  for (const d of lines) {
    const m = /^renamed to (.+)$/.exec(d.provider);
    const from = d.where.slice(where.length + 2);
    if (!m || parentOf(from) === from || from.slice(parentOf(from).length) !== m[1]!.slice(parentOf(m[1]!).length)) continue;
    const key = `${parentOf(from)}\0${parentOf(m[1]!)}`;
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  const out: Difference[] = [];
  for (const d of lines) {
    const group = [...groups.values()].find((g) => g.length > 1 && g.includes(d));
    if (!group) out.push(d);
    else if (group[0] === d) {
      const [from, to] = [...groups].find(([, g]) => g === group)![0].split("\0") as [string, string];
      out.push({ where: `${where}: ${from}`, profile: `${from}: ${group.length} members`, provider: `renamed to ${to}` });
    }
  }
  return out;
}

/**
 * The same change in several codes' answers (one branch of the provider answers them all): one
 * line naming them all, `codes.{wrong_api_secret,unknown_api_key}.status`.
 */
export function mergeAcrossCodes(differences: readonly Difference[]): Difference[] {
  const out: Array<Difference & { codes?: string[]; rest?: string }> = [];
  for (const d of differences) {
    const m = /^codes\.([a-z0-9_]+)(\..*)$/.exec(d.where);
    const same = m && out.find((o) => o.rest === m[2] && o.profile === d.profile && o.provider === d.provider);
    if (m && same) same.codes!.push(m[1]!);
    else out.push(m ? { ...d, codes: [m[1]!], rest: m[2]! } : { ...d });
  }
  return out.map(({ codes, rest, ...d }) => (codes && codes.length > 1 ? { ...d, where: `codes.{${codes.join(",")}}${rest}` } : d));
}

function leewaySeconds(leeway: string | number | undefined): number {
  if (leeway === undefined) return 0;
  try {
    return parseDurationSeconds(String(leeway));
  } catch {
    return 0;
  }
}

function seconds(ttl: string | undefined): string {
  if (ttl === undefined) return "(the sandbox's default)";
  try {
    return `${parseDurationSeconds(ttl)} s`;
  } catch {
    return ttl;
  }
}

function show(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "(absent)");
}
