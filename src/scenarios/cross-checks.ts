import { faker as fakerForChecks } from "@faker-js/faker/locale/en";
import { merchantIdentifiers, type MerchantIdentity } from "../core/merchants.js";
import { clip, type Explained, type Path } from "../core/source/data-problems.js";
import { didYouMean } from "../core/source/suggest.js";
import { placeholderProblem, placeholdersIn } from "./template.js";

/** Cross-field checks the schema cannot express; on raw data, so they skip what is malformed. */
export function semanticProblems(data: Record<string, unknown>): Explained[] {
  const problems: Explained[] = [];
  const merchants = Array.isArray(data.merchants) ? (data.merchants as unknown[]) : [];
  const seen = new Map<string, number>();
  const ids: string[] = [];
  const idSet = new Set<string>();
  merchants.forEach((m, i) => {
    if (!m || typeof m !== "object") return;
    const merchant = m as Record<string, unknown>;
    if (typeof merchant.id === "string") {
      ids.push(merchant.id);
      idSet.add(merchant.id);
    }
    for (const identifier of merchantIdentifiers(identityOf(merchant))) {
      const key = `${identifier.name}:${identifier.value}`;
      const field = identifier.field.join(".");
      if (seen.has(key)) {
        problems.push({
          path: ["merchants", i, ...identifier.field],
          message: `merchants[${seen.get(key)}] has the same ${field}; each merchant needs its own`,
        });
      } else seen.set(key, i);
    }
  });
  const rules = Array.isArray(data.rules) ? (data.rules as unknown[]) : [];
  rules.forEach((r, i) => {
    if (!r || typeof r !== "object") return;
    const rule = r as { match?: { merchant?: unknown; calls?: unknown }; then?: { respond?: { body?: unknown } } };
    const merchant = rule.match?.merchant;
    if (typeof merchant === "string" && !idSet.has(merchant)) {
      const listed = ids.length <= 10 ? ids.join(", ") : `${ids.slice(0, 10).join(", ")} and ${ids.length - 10} more`;
      problems.push({
        path: ["rules", i, "match", "merchant"],
        message: `'${clip(merchant)}' is not a merchant of this scenario${didYouMean(merchant, ids)} (merchants: ${listed})`,
      });
    }
    const body = rule.then?.respond?.body;
    if (body !== undefined) problems.push(...templateProblems(body, ["rules", i, "then", "respond", "body"]));
    const calls = rule.match?.calls;
    if (calls && typeof calls === "object" && Object.keys(calls).length === 0) {
      problems.push({ path: ["rules", i, "match", "calls"], message: "calls needs nth, from or times" });
    }
  });
  return problems;
}

/** What identifies a merchant of the raw data, as far as it is given (a malformed field is left out). */
function identityOf(merchant: Record<string, unknown>): MerchantIdentity {
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const login = merchant.login && typeof merchant.login === "object" ? (merchant.login as Record<string, unknown>) : undefined;
  return { id: text(merchant.id), apiKey: text(merchant.api_key), paymentToken: text(merchant.payment_token), login: { email: text(login?.email) } };
}

/**
 * Every `{{…}}` placeholder in a response body must resolve; checked here so a bad one never reaches a request.
 * `quote`: how an expression is shown (see placeholderProblem).
 */
export function templateProblems(value: unknown, path: Path, quote?: (text: string) => string): Explained[] {
  if (typeof value === "string") {
    return placeholdersIn(value).flatMap((expr) => {
      const problem = placeholderProblem(expr, fakerForChecks, quote);
      return problem ? [{ path, message: problem }] : [];
    });
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => templateProblems(v, [...path, i], quote));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => templateProblems(v, [...path, k], quote));
  return [];
}
