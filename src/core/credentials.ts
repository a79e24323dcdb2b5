import type { CredentialPrecedence } from "./config.js";
import { InvalidRequest } from "./errors.js";
import { headerCount, headerValue, type SandboxRequest } from "./http-types.js";

/**
 * Where the token exchange finds `api_key` and `api_secret`: the JSON body field or the
 * `X-Api-Key` / `X-Api-Secret` header, each credential on its own. When a credential comes both
 * ways, the precedence setting decides (`must_match` by default, docs/architecture.md).
 */

interface CredentialSpec {
  field: "api_key" | "api_secret";
  header: "x-api-key" | "x-api-secret";
  headerLabel: string;
  secret: boolean;
}

const API_KEY: CredentialSpec = { field: "api_key", header: "x-api-key", headerLabel: "X-Api-Key", secret: false };
const API_SECRET: CredentialSpec = { field: "api_secret", header: "x-api-secret", headerLabel: "X-Api-Secret", secret: true };

export interface Credentials {
  apiKey: string;
  apiSecret: string;
  /** Where each came from, for the journal and the integration report. */
  sources: { apiKey: CredentialSource; apiSecret: CredentialSource };
}

export type CredentialSource = "body" | "header" | "both";

export function extractCredentials(
  request: SandboxRequest,
  body: Record<string, unknown> | undefined,
  precedence: CredentialPrecedence,
): Credentials {
  const key = pick(API_KEY, request, body, precedence);
  const secret = pick(API_SECRET, request, body, precedence);
  return { apiKey: key.value, apiSecret: secret.value, sources: { apiKey: key.source, apiSecret: secret.source } };
}

function pick(
  spec: CredentialSpec,
  request: SandboxRequest,
  body: Record<string, unknown> | undefined,
  precedence: CredentialPrecedence,
): { value: string; source: CredentialSource } {
  if (headerCount(request, spec.header) > 1) {
    throw new InvalidRequest("credential_header_repeated", `The ${spec.headerLabel} header was sent more than once. Send it exactly once.`);
  }
  const fromHeader = headerValue(request, spec.header);
  const hasBodyField = body !== undefined && Object.hasOwn(body, spec.field);
  const fromBody = hasBodyField ? body[spec.field] : undefined;
  if (hasBodyField && typeof fromBody !== "string") {
    const kind = fromBody === null ? "null" : Array.isArray(fromBody) ? "an array" : typeof fromBody;
    throw new InvalidRequest(
      "credential_not_string",
      `The body field "${spec.field}" must be a string, but it is ${kind}. Send it as a JSON string.`,
    );
  }
  const headerGiven = fromHeader !== undefined && fromHeader !== "";
  const bodyGiven = typeof fromBody === "string" && fromBody !== "";
  if (!headerGiven && !bodyGiven) {
    // `curl -u key:secret` and many HTTP clients' "basic auth" option: say so, or the client is told
    // its credentials are missing while it is sure it sent them. The header is never decoded.
    if (sentBasic(request)) {
      throw new InvalidRequest(
        `${spec.field}_missing`,
        `${spec.field} is missing: the request sent HTTP Basic credentials (Authorization: Basic, what curl -u sends), which this endpoint does not accept. Send api_key and api_secret as the JSON body {"api_key": "...", "api_secret": "..."} with Content-Type: application/json, or as the X-Api-Key and X-Api-Secret headers.`,
      );
    }
    const empty = fromHeader === "" || fromBody === "" ? " (it was sent empty)" : "";
    throw new InvalidRequest(
      `${spec.field}_missing`,
      `${spec.field} is missing${empty}. Send it as the JSON body field "${spec.field}" (with Content-Type: application/json) or as the ${spec.headerLabel} header.`,
    );
  }
  if (headerGiven && bodyGiven) return resolveBoth(spec, fromHeader!, fromBody as string, precedence);
  return headerGiven ? { value: fromHeader!, source: "header" } : { value: fromBody as string, source: "body" };
}

function resolveBoth(
  spec: CredentialSpec,
  fromHeader: string,
  fromBody: string,
  precedence: CredentialPrecedence,
): { value: string; source: CredentialSource } {
  switch (precedence) {
    case "header":
      return { value: fromHeader, source: "header" };
    case "body":
      return { value: fromBody, source: "body" };
    case "reject_both":
      throw new InvalidRequest(
        "credential_sent_twice",
        `${spec.field} was sent both in the body and in the ${spec.headerLabel} header, and this sandbox is set to reject that (credential precedence 'reject_both'). Send it one way only.`,
      );
    case "must_match":
      if (fromHeader === fromBody) return { value: fromHeader, source: "both" };
      throw new InvalidRequest(
        "credential_conflict",
        `${spec.field} was sent both in the body and in the ${spec.headerLabel} header with different values. Send it one way only, or make both the same.`,
      );
  }
}

/** An `Authorization: Basic …` header (the scheme is case-insensitive, RFC 9110 §11.1). */
function sentBasic(request: SandboxRequest): boolean {
  return /^basic(\s|$)/i.test(headerValue(request, "authorization") ?? "");
}
