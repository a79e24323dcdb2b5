import type { PlaceholderType } from "./placeholders.js";
import { wholePlaceholder } from "./template.js";

/**
 * The JSON Schema of what a template renders, for the OpenAPI document: constants as `const`,
 * placeholders by the type of their value, text with placeholders as a string.
 */
export function templateSchema(template: unknown, types: Readonly<Record<string, PlaceholderType>>): Record<string, unknown> {
  if (typeof template === "string") {
    const whole = wholePlaceholder(template);
    if (whole !== undefined) return typeSchema(types[whole.name] ?? "string");
    return template.includes("{{") ? { type: "string" } : { type: "string", const: template };
  }
  if (typeof template === "number") return { type: "number", const: template };
  if (typeof template === "boolean") return { type: "boolean", const: template };
  if (template === null) return { type: "null" };
  if (Array.isArray(template)) {
    const items = template.map((item) => templateSchema(item, types));
    return { type: "array", prefixItems: items, minItems: items.length, maxItems: items.length };
  }
  const entries = Object.entries(template as Record<string, unknown>);
  return {
    type: "object",
    properties: Object.fromEntries(entries.map(([key, value]) => [key, templateSchema(value, types)])),
    required: entries.map(([key]) => key),
  };
}

function typeSchema(type: PlaceholderType): Record<string, unknown> {
  switch (type) {
    case "object":
      return { type: "object" };
    case "string|null":
      return { type: ["string", "null"] };
    case "number|null":
      return { type: ["number", "null"] };
    case "string|number":
      return { type: ["string", "number"] };
    case "string|number|null":
      return { type: ["string", "number", "null"] };
    default:
      return { type };
  }
}
