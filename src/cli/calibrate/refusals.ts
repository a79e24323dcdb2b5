import { type CatalogueCode, ERROR_CATALOGUE } from "../../core/error-catalogue.js";
import { headerCase } from "../../profiles/shaped-schemas.js";
import { constantPaths, type Full, oauthErrorsSeen, providerCodePath, type RefusalContext, wholeRefusal } from "./refusal-reading.js";
import { type Group, INFERRED_CODES, nowOf, type Observation, PROBE_CODES, type ProbeName } from "./observations.js";

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
  text?: string;
  empty?: true;
  wwwAuthenticate?: string;
  headers?: Record<string, string>;
}

export interface RefusalInference {
  refusal?: RefusalEntry & { groups?: Partial<Record<Group, RefusalEntry>> };
  codes: Record<string, RefusalEntry>;
  /** Per observed probe (and per inferred code): what the profile now says, and how. */
  lines: Array<{ probe: ProbeName | "(inferred)"; code: string; says: string; note?: string; from?: ProbeName }>;
}

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
    const full = wholeRefusal(o, codePath, { ...ctx, nowS: nowOf(o, ctx.nowS) });
    const again = repeats.find((r) => r.probe === o.probe);
    if (again && full.message !== undefined && wholeRefusal(again, codePath, { ...ctx, nowS: nowOf(again, ctx.nowS) }).message !== full.message) {
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
  if (headers.length > 0) entry.headers = Object.fromEntries(headers.map(([n, v]) => [headerCase(n), v]));
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
    entry.text !== undefined && "a text body",
    entry.wwwAuthenticate !== undefined && `challenge ${entry.wwwAuthenticate}`,
    entry.headers !== undefined && `headers ${Object.keys(entry.headers).join(", ")}`,
  ].filter(Boolean);
  return `codes.${code}: ${parts.join(", ") || "as its group's refusal"}`;
}
