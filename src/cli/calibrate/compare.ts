import { type CatalogueCode, ERROR_CATALOGUE } from "../../core/error-catalogue.js";
import { parseDurationSeconds } from "../../core/duration.js";
import type { CalibratedProfile } from "./infer.js";
import { isObject, leaves, pathText } from "./json-paths.js";
import { type Observations, PROBE_CODES } from "./observations.js";

/**
 * `calibrate --check`: the profile on file against the one the provider's answers give today.
 * Pure. Only what this run observed is compared (a section calibrate did not probe this time, such
 * as payment/init without --allow-writes, is not a difference).
 */

export interface Difference {
  where: string;
  profile: string;
  provider: string;
}

export function compareProfiles(stored: unknown, fresh: CalibratedProfile, obs: Observations): Difference[] {
  const s = (isObject(stored) ? stored : {}) as Partial<CalibratedProfile>;
  const out: Difference[] = [];
  const seen = new Set(obs.observed.map((o) => o.probe));
  const same = (where: string, a: unknown, b: unknown) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ where, profile: show(a), provider: show(b) });
  };

  same("token.status", s.token?.status ?? 200, fresh.token.status);
  same("token.contentType", s.token?.contentType ?? "application/json", fresh.token.contentType);
  out.push(...bodyDifferences("token.body", s.token?.body, fresh.token.body));

  if (fresh.refusal) {
    same("refusal.contentType", s.refusal?.contentType ?? "application/problem+json", fresh.refusal.contentType);
    same("refusal.wwwAuthenticate", s.refusal?.wwwAuthenticate ?? "keep", fresh.refusal.wwwAuthenticate);
    out.push(...bodyDifferences("refusal.body", s.refusal?.body, fresh.refusal.body));
  } else if (s.refusal?.body !== undefined) {
    out.push({ where: "refusal.body", profile: "a JSON body", provider: "no refusal with a JSON body" });
  }
  for (const o of obs.observed) {
    const code = PROBE_CODES[o.probe] as CatalogueCode | undefined;
    if (!code) continue;
    const was = s.codes?.[code] ?? {};
    const now = fresh.codes?.[code] ?? {};
    same(`codes.${code}.code`, was.code ?? `(the sandbox's ${code})`, now.code ?? `(the sandbox's ${code})`);
    same(`codes.${code}.status`, was.status ?? ERROR_CATALOGUE[code].status[0], now.status ?? ERROR_CATALOGUE[code].status[0]);
    if (was.body !== undefined || now.body !== undefined) {
      out.push(...bodyDifferences(`codes.${code}.body`, was.body ?? s.refusal?.body, now.body ?? fresh.refusal?.body));
    }
  }
  if (seen.has("login") && fresh.login) {
    same("login.status", s.login?.status ?? 200, fresh.login.status);
    out.push(...bodyDifferences("login.body", s.login?.body, fresh.login.body));
  }
  if (seen.has("payment_init") && fresh.paymentInit) {
    same("paymentInit.status", s.paymentInit?.status ?? 201, fresh.paymentInit.status);
    out.push(...bodyDifferences("paymentInit.body", s.paymentInit?.body, fresh.paymentInit.body));
  }
  const jwt = fresh.jwt ?? {};
  const was = s.jwt ?? {};
  for (const key of ["alg", "typ", "issuer", "audience", "merchantClaim"] as const) {
    if (jwt[key] !== undefined) same(`jwt.${key}`, was[key] ?? (key === "merchantClaim" ? "sub" : "(the sandbox's default)"), jwt[key]);
  }
  if (jwt.ttl !== undefined) same("jwt.ttl", seconds(was.ttl), seconds(jwt.ttl));
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
  return out;
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
