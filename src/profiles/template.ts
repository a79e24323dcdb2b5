import type { Path } from "../core/source/data-problems.js";

/**
 * Profile templates: any JSON value whose strings may hold `{{name}}`. A string that is exactly one
 * placeholder takes the value as it is (a number stays a number, an object an object); inside a
 * longer string a placeholder is written as text. Compiled once when the profile loads, so
 * rendering an answer walks a prepared tree and never parses a template again.
 */

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type Values = Readonly<Record<string, unknown>>;
export type Render = (values: Values) => unknown;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z0-9_]+)\s*\}\}$/;

/** Every placeholder of a template, with where it is (for located "unknown placeholder" problems). */
export function placeholdersIn(template: unknown, path: Path = []): Array<{ path: Path; name: string }> {
  if (typeof template === "string") return [...template.matchAll(PLACEHOLDER)].map((m) => ({ path, name: m[1]! }));
  if (Array.isArray(template)) return template.flatMap((item, i) => placeholdersIn(item, [...path, i]));
  if (template !== null && typeof template === "object") {
    return Object.entries(template).flatMap(([key, value]) => placeholdersIn(value, [...path, key]));
  }
  return [];
}

/** The name when the string is exactly one placeholder. */
export function wholePlaceholder(text: string): string | undefined {
  return WHOLE.exec(text)?.[1];
}

export function compileTemplate(template: unknown): Render {
  if (typeof template === "string") {
    const whole = wholePlaceholder(template);
    // An absent value (an order field the caller did not send) is null, never a missing member.
    if (whole !== undefined) return (values) => values[whole] ?? null;
    if (!template.includes("{{")) return () => template;
    return (values) => template.replace(PLACEHOLDER, (_, name: string) => asText(values[name]));
  }
  if (Array.isArray(template)) {
    const items = template.map(compileTemplate);
    return (values) => items.map((item) => item(values));
  }
  if (template !== null && typeof template === "object") {
    const members = Object.entries(template).map(([key, value]) => [key, compileTemplate(value)] as const);
    return (values) => {
      const out: Record<string, unknown> = {};
      for (const [key, render] of members) out[key] = render(values);
      return out;
    };
  }
  return () => template;
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
