import type { Faker } from "@faker-js/faker";
import type { RenderBudget } from "../core/render-budget.js";

/**
 * `{{ … }}` placeholders in scenario response bodies: request values, the merchant, the scenario,
 * the sandbox time, and faker generators (seeded with the sandbox, so runs repeat). Only these
 * names resolve; anything else is refused when the file loads, never evaluated as code.
 */

export interface TemplateValues {
  request: { method: string; path: string; query: string };
  merchant: { id: string; api_key: string } | undefined;
  scenario: { name: string; state: string };
  rule: { name: string };
  /** ISO time on the scenario's clock. */
  now: string;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const VALUE_PATHS = new Set([
  "request.method",
  "request.path",
  "request.query",
  "merchant.id",
  "merchant.api_key",
  "scenario.name",
  "scenario.state",
  "rule.name",
  "now",
]);

/**
 * Why a placeholder cannot resolve, or undefined when it can (checked at load, with `faker`).
 * `quote`: how the expression is shown (the control plane's `echo`, for a request's body).
 */
export function placeholderProblem(expression: string, faker: Faker, quote: (text: string) => string = (text) => text): string | undefined {
  if (VALUE_PATHS.has(expression)) return undefined;
  if (expression.startsWith("faker.")) {
    const fn = fakerFunction(faker, expression);
    if (typeof fn !== "function")
      return `'{{${quote(expression)}}}' is not a faker generator; write it like {{faker.string.uuid}} or {{faker.person.fullName}}`;
    try {
      fn();
    } catch {
      return `'{{${quote(expression)}}}' needs arguments, which templates cannot pass; use a generator that takes none, such as {{faker.string.uuid}}`;
    }
    return undefined;
  }
  return `'{{${quote(expression)}}}' is not a known placeholder; use ${[...VALUE_PATHS].join(", ")} or faker.<module>.<generator>`;
}

export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/** Fills every placeholder of every string in a JSON value, spending what it renders from `budget`. */
export function renderValue(value: unknown, values: TemplateValues, faker: Faker, budget: RenderBudget): unknown {
  if (typeof value === "string") return renderString(value, values, faker, budget);
  if (Array.isArray(value)) return value.map((v) => renderValue(v, values, faker, budget));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => {
        budget.spend(k.length);
        return [k, renderValue(v, values, faker, budget)];
      }),
    );
  }
  budget.spendValue(value);
  return value;
}

/** Fills every placeholder of `text`: the text and each value printed are spent from `budget` as they are made. */
export function renderString(text: string, values: TemplateValues, faker: Faker, budget: RenderBudget): string {
  budget.spend(text.length);
  return text.replace(PLACEHOLDER, (_, expression: string) => {
    const printed = placeholderValue(expression, values, faker);
    budget.spend(printed.length);
    return printed;
  });
}

function placeholderValue(expression: string, values: TemplateValues, faker: Faker): string {
  if (expression.startsWith("faker.")) {
    const fn = fakerFunction(faker, expression);
    if (typeof fn !== "function") throw new TemplateError(expression);
    try {
      return String(fn());
    } catch {
      throw new TemplateError(expression);
    }
  }
  const resolved = expression.split(".").reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], values);
  return resolved === undefined ? "" : String(resolved);
}

export class TemplateError extends Error {
  constructor(readonly expression: string) {
    super(`the placeholder {{${expression}}} cannot be filled`);
  }
}

/** `faker.string.uuid` → the bound generator, or undefined. Only own module/function names. */
function fakerFunction(faker: Faker, expression: string): (() => unknown) | undefined {
  const [, module, fn, ...rest] = expression.split(".");
  if (!module || !fn || rest.length) return undefined;
  const mod = (faker as unknown as Record<string, unknown>)[module];
  if (!mod || typeof mod !== "object" || module.startsWith("_")) return undefined;
  // Generators only: nothing every object has (toString, valueOf, hasOwnProperty …).
  if (fn.startsWith("_") || fn in Object.prototype || module in Object.prototype) return undefined;
  const f = (mod as Record<string, unknown>)[fn];
  if (typeof f !== "function") return undefined;
  return () => (f as (this: unknown) => unknown).call(mod);
}
