import { expect } from "vitest";
import type { problem, Reply } from "./server.js";

/**
 * Assertions and values the black-box suites share, so a change to the contract (the realm, the
 * challenge format, the problem headers) is made in one place.
 */
export const REALM = "merchant-api";
export const ISSUER = "https://merchant-sandbox.test";
export const AUDIENCE = "merchant-api";
/** The renewal hint that ends most invalid_token descriptions. */
export const RENEW_HINT = "Request a new access token from POST /api/v2/auth/token.";

/** The RFC 6750 challenge the sandbox sends with an error code (description made quoted-string safe). */
export function challenge(error: string, description: string, scope?: string): string {
  const safe = description.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, (ch) => (ch === '"' ? "'" : "?"));
  return `Bearer realm="${REALM}", error="${error}", error_description="${safe}"${scope ? `, scope="${scope}"` : ""}`;
}

/** The challenge of an invalid_token refusal. */
export function bearerChallenge(description: string): string {
  return challenge("invalid_token", description);
}

/** `Authorization: Bearer <token>`, merged into the rest of the request (GET unless `init` says otherwise). */
export function bearer(token: string, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${token}` } };
}

/** What a refusal must show besides its status and body. */
export interface ProblemChecks {
  /**
   * Headers and their exact value (null: the header is absent). WWW-Authenticate is the exact
   * RFC 6750 challenge of an invalid_token refusal unless it is named here; name it to check it on
   * any other refusal.
   */
  headers?: Record<string, string | null>;
  /** Secrets and tokens that must appear nowhere in the body or the headers (a JWT nor its long parts). */
  notEchoed?: string[];
}

/**
 * A refusal, exactly: status, problem+json, no-store, the whole body, the headers `checks` names
 * (and the challenge of an invalid_token), and no JWT nor any of `checks.notEchoed` echoed back.
 */
export function expectProblem(r: Reply, expected: ReturnType<typeof problem>, checks: ProblemChecks = {}): void {
  expect(r.status, r.text).toBe(expected.status);
  expect(r.headers.get("content-type")).toBe("application/problem+json");
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.json).toEqual(expected);
  const headers = { ...(expected.error === "invalid_token" ? { "www-authenticate": bearerChallenge(expected.detail) } : {}), ...checks.headers };
  for (const [name, value] of Object.entries(headers)) expect(r.headers.get(name), `header ${name}`).toBe(value);
  expectNotEchoed(r, checks.notEchoed);
}

/** Anything shaped like a JWT (a base64url JSON header, a dot, more). */
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/;

/**
 * No JWT, and none of `secrets`, in the body or any header. A token is also looked for by each of
 * its dot-separated parts long enough to be recognisable, so a partial echo is caught too.
 */
export function expectNotEchoed(r: Reply, secrets: string[] = []): void {
  const headers = [...r.headers.entries()];
  expect(r.text).not.toMatch(JWT_PATTERN);
  for (const [name, value] of headers) expect(value, `header ${name}`).not.toMatch(JWT_PATTERN);
  for (const secret of secrets) {
    for (const part of [secret, ...secret.split(".").filter((p) => p !== secret && p.length >= 16)]) {
      expect(r.text).not.toContain(part);
      for (const [name, value] of headers) expect(value, `header ${name}`).not.toContain(part);
    }
  }
}
