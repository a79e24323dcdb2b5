import { z } from "zod";

/** The keys an object of a zod schema allows at a path of the data: for "unknown key" messages. */
export function allowedKeysIn(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const object = objectAt(schema, path);
  return object ? Object.keys(object.shape) : [];
}

/** The object schema at `path` inside `schema`, looking through optionals, lists and unions. */
function objectAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodObject | undefined {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) {
    return objectAt(schema.unwrap() as z.ZodType, path);
  }
  // A union such as `true` or an object (rotate_signing_key): the branch that is an object there.
  if (schema instanceof z.ZodUnion) {
    for (const option of schema.options as readonly z.ZodType[]) {
      const found = objectAt(option, path);
      if (found) return found;
    }
    return undefined;
  }
  if (path.length === 0) return schema instanceof z.ZodObject ? schema : undefined;
  const [step, ...rest] = path;
  if (schema instanceof z.ZodArray) return typeof step === "number" ? objectAt(schema.element as z.ZodType, rest) : undefined;
  if (schema instanceof z.ZodObject && typeof step === "string" && Object.hasOwn(schema.shape, step)) {
    return objectAt(schema.shape[step] as z.ZodType, rest);
  }
  return undefined;
}
