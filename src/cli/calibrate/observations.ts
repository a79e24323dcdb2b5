import type { CatalogueCode } from "../../core/error-catalogue.js";

/**
 * What calibrate saw: one entry per probe, in the order they were sent. The probing (probe.ts)
 * fills it over HTTP; the inference (infer.ts) and the comparison (compare.ts) are pure functions
 * of it, so they are tested without any server.
 */

/** The probes, in the order calibrate sends them (docs: README, "Learn a profile from your provider"). */
export type ProbeName =
  | "token_body"
  | "token_headers"
  | "wrong_secret"
  | "unknown_key"
  | "missing_secret"
  | "malformed_json"
  | "protected_fresh"
  | "no_authorization"
  | "malformed_token"
  | "foreign_jwt"
  | "expired_token"
  | "payment_init_jwt"
  | "login"
  | "payment_init";

/** One answer of the provider, as far as a profile can say anything about it. */
export interface Answer {
  status: number;
  /** Media type only, lower case, no parameters (`application/json`). */
  contentType: string | undefined;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The body parsed as JSON; undefined when it is empty or not JSON. */
  json: unknown;
  /** The body had bytes that are not JSON. */
  notJson: boolean;
}

export interface Observation {
  probe: ProbeName;
  /** What was sent, in words (never a credential). */
  sent: string;
  answer: Answer;
}

/** A probe not sent, and why (a flag not given). */
export interface Skipped {
  probe: ProbeName;
  why: string;
}

/** The sandbox refusal code each refusal probe stands for (src/core/error-catalogue.ts; see the endpoints). */
export const PROBE_CODES: Partial<Record<ProbeName, CatalogueCode>> = {
  wrong_secret: "wrong_api_secret",
  unknown_key: "unknown_api_key",
  missing_secret: "api_secret_missing",
  malformed_json: "body_malformed_json",
  no_authorization: "credentials_missing",
  malformed_token: "token_malformed",
  // A JWT with a kid the sandbox does not know: AccessTokens refuses it as token_unknown_kid.
  foreign_jwt: "token_unknown_kid",
  expired_token: "token_expired",
  payment_init_jwt: "access_token_on_payment_init",
};

/**
 * Sandbox codes no probe observes, answered like a probe that did: the provider was not asked, so
 * the profile says what it most likely answers, and the table says it was inferred.
 */
export const INFERRED_CODES: ReadonlyArray<{ code: CatalogueCode; from: ProbeName; why: string }> = [
  { code: "token_signature_invalid", from: "foreign_jwt", why: "a JWT its keys did not sign, as the foreign-key JWT" },
  { code: "token_kid_missing", from: "foreign_jwt", why: "a JWT its keys did not sign, as the foreign-key JWT" },
  { code: "token_algorithm_rejected", from: "foreign_jwt", why: "a JWT its keys did not sign, as the foreign-key JWT" },
  { code: "token_expired", from: "foreign_jwt", why: "no --expired-token given: answered as the foreign-key JWT (an invalid token)" },
];

export interface Observations {
  /** The provider's base URL (no credentials in it). */
  url: string;
  /** When the probing began (ms since 1970, the machine's clock), to read timestamps against. */
  startedAt: number;
  observed: Observation[];
  skipped: Skipped[];
  /** What payment/init was sent (with --allow-writes), to recognise echoed fields. */
  paymentInitSent?: Record<string, string | number>;
}
