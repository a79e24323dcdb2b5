import type { SandboxSettings } from "../core/config.js";
import type { RequestTrace } from "../core/context.js";
import { extractCredentials } from "../core/credentials.js";
import { MethodNotAllowed, SandboxError } from "../core/errors.js";
import type { SandboxRequest } from "../core/http-types.js";
import { assertBodySize, readJsonObject, type JsonBodyOptions } from "../core/json-body.js";

/**
 * A request's form: what a merchant API route takes whoever sends it (its methods, a body within
 * the size limit, JSON where it reads JSON, each credential given one way). The pipeline checks it
 * before the request's identity counts and before any scenario rule matches, from the route table
 * (merchant-routes.ts), so no endpoint repeats it: a request refused for its form proves nothing
 * and is no call of anyone's (no rule fires, no counter moves, no finding counts it). Otherwise a
 * page on any origin could spend a merchant's scripted answers with a no-cors `text/plain` POST of
 * its published credentials, answered 415 but counted.
 */
export interface RequestForm {
  /** The methods the route takes; the rest are answered 405 with this list in `Allow`. */
  methods: readonly string[];
  /** The path a 405 names; undefined for a protected group, whose 405 names the path sent. */
  path?: string;
  /** How the route reads its body as JSON, per the scenario's settings; undefined: its body is never read (its size still counts). */
  json?: (settings: SandboxSettings) => JsonBodyOptions;
  /** The token exchange: api_key and api_secret must each be readable one way (credential precedence). */
  credentials?: true;
  /** When the route answers every request alike whatever its form (the login once it is gone: 410). */
  formless?: (settings: SandboxSettings) => boolean;
}

/**
 * The refusal of a request whose form the route does not take, or undefined. `request` is the one
 * the endpoint gets (a HEAD as GET); the settings are those of the scenario the request names.
 */
export function formRefusal(form: RequestForm, request: SandboxRequest, trace: RequestTrace, maxBodyBytes: number): SandboxError | undefined {
  const settings = trace.scenario.settings;
  if (form.formless?.(settings)) return undefined;
  if (!form.methods.includes(request.method)) return new MethodNotAllowed(request.method, form.path ?? trace.shown.path, [...form.methods]);
  try {
    assertBodySize(request, maxBodyBytes);
    // The readers the endpoints use afterwards: the same body, decoded once, refused the same way.
    const fields = form.json && readJsonObject(request, trace.body, form.json(settings));
    if (form.credentials) extractCredentials(request, fields, settings.credentialPrecedence);
  } catch (e) {
    if (e instanceof SandboxError) return e;
    throw e;
  }
  return undefined;
}
