import type { RenderBudget } from "../core/render-budget.js";
import type { Path } from "../core/source/data-problems.js";
import { TimeValue, type TimeFormat } from "./time-value.js";
import { CountValue } from "./count-value.js";
import { CompanionTokenValue } from "./companion-token.js";

/**
 * Profile templates: any JSON value whose strings may hold `{{name}}` or `{{name:format}}` (a
 * time's format, time-value.ts). A string that is exactly one placeholder takes the value as it is
 * (a number stays a number, an object an object, a time its format's type); inside a longer string
 * a placeholder is written as text. Compiled once when the profile loads, so rendering an answer
 * walks a prepared tree and never parses a template again. Every render spends what it makes from
 * the answer's RenderBudget as it makes it, so an answer stops at the bound, never after.
 */

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type Values = Readonly<Record<string, unknown>>;
export type Render = (values: Values, budget: RenderBudget) => unknown;
export type TextRender = (values: Values, budget: RenderBudget) => string;

/** A placeholder in a template string (global: read with matchAll or replace, which keep no state here). */
export const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)(?::([A-Za-z0-9-]+))?\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z0-9_]+)(?::([A-Za-z0-9-]+))?\s*\}\}$/;

export interface FoundPlaceholder {
  path: Path;
  name: string;
  /** The format after the colon, if any (checked by the loader). */
  format: string | undefined;
}

/** Every placeholder of a template, with where it is (for located "unknown placeholder" problems). */
export function placeholdersIn(template: unknown, path: Path = []): FoundPlaceholder[] {
  if (typeof template === "string") return [...template.matchAll(PLACEHOLDER)].map((m) => ({ path, name: m[1]!, format: m[2] }));
  if (Array.isArray(template)) return template.flatMap((item, i) => placeholdersIn(item, [...path, i]));
  if (template !== null && typeof template === "object") {
    return Object.entries(template).flatMap(([key, value]) => placeholdersIn(value, [...path, key]));
  }
  return [];
}

/** The name (and format) when the string is exactly one placeholder. */
export function wholePlaceholder(text: string): { name: string; format: string | undefined } | undefined {
  const m = WHOLE.exec(text);
  return m ? { name: m[1]!, format: m[2] } : undefined;
}

export function compileTemplate(template: unknown): Render {
  if (typeof template === "string") {
    const whole = wholePlaceholder(template);
    // An absent value (an order field the caller did not send) is null, never a missing member.
    if (whole !== undefined) {
      return (values, budget) => {
        const value = typed(values[whole.name], whole.format) ?? null;
        budget.spendValue(value);
        return value;
      };
    }
    return compileText(template);
  }
  if (Array.isArray(template)) {
    const items = template.map(compileTemplate);
    return (values, budget) => items.map((item) => item(values, budget));
  }
  if (template !== null && typeof template === "object") {
    const members = Object.entries(template).map(([key, value]) => [key, compileTemplate(value)] as const);
    return (values, budget) => {
      const out: Record<string, unknown> = {};
      for (const [key, render] of members) {
        budget.spend(key.length);
        out[key] = render(values, budget);
      }
      return out;
    };
  }
  return (_, budget) => {
    budget.spendValue(template);
    return template;
  };
}

/**
 * A template string rendered as text (a header value, a message): every placeholder as text,
 * passed through `reduce` (a challenge's quoted-string rule, a header value's escaping) when given.
 */
export function compileText(template: string, reduce: (text: string) => string = (text) => text): TextRender {
  if (!template.includes("{{")) {
    return (_, budget) => {
      budget.spend(template.length);
      return template;
    };
  }
  // Split once, here: a render joins the parts instead of scanning the whole template (a text body
  // may be a 64 KiB page). With PLACEHOLDER's two groups: literal, name, format, literal, …
  const parts = template.split(PLACEHOLDER) as Array<string | undefined>;
  return (values, budget) => {
    budget.spend(template.length);
    let out = parts[0]!;
    for (let i = 1; i < parts.length; i += 3) {
      const text = reduce(asText(typed(values[parts[i]!], parts[i + 1])));
      budget.spend(text.length);
      out += text + parts[i + 2]!;
    }
    return out;
  };
}

/** A time, a count or a companion token in its format (the loader allows a format on those only); any other value as it is. */
function typed(value: unknown, format: string | undefined): unknown {
  if (value instanceof TimeValue) return value.format(format as TimeFormat | undefined);
  return value instanceof CountValue || value instanceof CompanionTokenValue ? value.format(format) : value;
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
