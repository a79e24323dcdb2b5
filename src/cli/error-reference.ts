import { CATALOGUE_CODES, ERROR_CATALOGUE, SIMULATED_CODE, STATUS_TITLES } from "../core/error-catalogue.js";

/**
 * docs/errors.md: the reference of every refusal code, rendered from the error catalogue
 * (src/core/error-catalogue.ts). `npm run docs:errors` writes it; test/unit/error-catalogue.test.ts
 * fails when the committed file is not this output.
 */
export function errorReference(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const rows = CATALOGUE_CODES.map((code) => {
    const { status, error, meaning, fix } = ERROR_CATALOGUE[code];
    const statuses = status.map((s) => `${s} ${STATUS_TITLES[s] ?? ""}`.trim()).join(", ");
    const errors = error.length > 0 ? error.map((e) => `\`${e}\``).join(", ") : "(none)";
    return `| \`${code}\` | ${statuses} | ${errors} | ${cell(meaning)} | ${cell(fix)} |`;
  });
  return [
    "# Refusal codes",
    "",
    "<!-- Generated from src/core/error-catalogue.ts by `npm run docs:errors`. Do not edit by hand. -->",
    "",
    "Every refusal is `application/problem+json` (RFC 9457) with the OAuth members `error` and `error_description`,",
    `and a stable \`code\`: switch on the code, never on the text. Its \`type\` is \`urn:merchant-sandbox:problem:<code>\`.`,
    "The same catalogue gives the OpenAPI document's `ErrorCode` schema and each operation's error responses",
    "(GET /__sandbox/openapi.json).",
    "",
    `${CATALOGUE_CODES.length} codes, and \`simulated_<status>\`.`,
    "",
    "| Code | Status | OAuth `error` | Meaning | How to fix |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    `| \`simulated_<status>\` | the scripted status | \`server_error\` for 5xx, else (none) | ${cell(SIMULATED_CODE.meaning)} | ${cell(SIMULATED_CODE.fix)} |`,
    "",
  ].join("\n");
}
