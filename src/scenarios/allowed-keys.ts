import { allowedKeysIn } from "../core/source/allowed-keys.js";
import { scenarioSchema } from "./schema.js";

/**
 * The keys a scenario file may use at a place in it, read from the schema itself (schema.ts), so an
 * "unknown key" message can list what is allowed there and suggest the nearest, and a key added to
 * the schema is allowed in the message at once.
 */
export function allowedKeysAt(path: readonly PropertyKey[]): string[] {
  return allowedKeysIn(scenarioSchema, path);
}
