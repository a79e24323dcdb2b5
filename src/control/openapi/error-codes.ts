import { CATALOGUE_CODES, catalogueEntry, type ErrorCode, SIMULATED_CODE } from "../../core/error-catalogue.js";

/**
 * `components.schemas.ErrorCode`, read from the error catalogue (src/core/error-catalogue.ts):
 * every code with its statuses, OAuth error, meaning and fix.
 */
export const errorCodeSchema = {
  title: "ErrorCode",
  description:
    "The stable refusal code: switch on this, never on the text. Each value below says when the sandbox gives it and how to fix the request; `simulated_<status>` is any other error status a scenario rule scripts.",
  anyOf: [
    ...CATALOGUE_CODES.map((code) => ({ const: code, description: codeDescription(code) })),
    { type: "string", pattern: SIMULATED_CODE.pattern, description: SIMULATED_CODE.meaning },
  ],
};

/** `401 invalid_token: <meaning> Fix: <fix>` */
function codeDescription(code: ErrorCode): string {
  const { status, error, meaning, fix } = catalogueEntry(code);
  return `${status.join(" or ")}${error.length > 0 ? ` ${error.join(" or ")}` : ""}: ${meaning} Fix: ${fix}`;
}
