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

/** `Authorization: Bearer <token>`, merged into the rest of the request. */
export function bearer(token: string, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${token}` } };
}

/**
 * A refusal, exactly: status, problem+json, no-store, the whole body, and for invalid_token the
 * exact challenge.
 */
export function expectProblem(r: Reply, expected: ReturnType<typeof problem>): void {
  expect(r.status, r.text).toBe(expected.status);
  expect(r.headers.get("content-type")).toBe("application/problem+json");
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.json).toEqual(expected);
  if (expected.error === "invalid_token") expect(r.headers.get("www-authenticate")).toBe(bearerChallenge(expected.detail));
}
