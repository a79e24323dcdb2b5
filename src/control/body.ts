import { echo } from "../core/echo.js";
import { InvalidRequest } from "../core/errors.js";
import type { SandboxRequest } from "../core/http-types.js";
import { readJsonObject, type RequestBody } from "../core/json-body.js";

/** A control-plane JSON body (an empty body is `{}`), with the same 400/415 rules as the API. */
export function controlBody(request: SandboxRequest, body: RequestBody, endpoint: string, example: string): Record<string, unknown> {
  return readJsonObject(request, body, { strictContentType: true, endpoint, example }) ?? {};
}

/** Refuses fields the endpoint does not take, naming the ones it does. */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[], endpoint: string): void {
  const extra = Object.keys(body).filter((k) => !allowed.includes(k));
  if (extra.length) {
    throw new InvalidRequest(
      "unknown_field",
      `${endpoint} does not take ${extra.map((k) => `'${echo(k, 64)}'`).join(", ")}; it takes ${allowed.map((k) => `'${k}'`).join(", ")}.`,
    );
  }
}
