import { type CatalogueCode, ERROR_CATALOGUE } from "../../core/error-catalogue.js";

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
  | "missing_key"
  | "malformed_json"
  | "protected_fresh"
  | "no_authorization"
  | "other_scheme"
  | "empty_bearer"
  | "payment_token_protected"
  | "malformed_token"
  | "foreign_jwt"
  | "expired_token"
  | "revoked_token"
  | "payment_init_jwt"
  | "wrong_payment_token"
  | "login"
  | "wrong_password"
  | "payment_init";

/** The endpoint group of each probe: which `refusal.groups` entry its refusal belongs to. */
export type Group = "token" | "protected" | "paymentInit" | "login";
export const PROBE_GROUPS: Readonly<Record<ProbeName, Group>> = {
  token_body: "token",
  token_headers: "token",
  wrong_secret: "token",
  unknown_key: "token",
  missing_secret: "token",
  missing_key: "token",
  malformed_json: "token",
  protected_fresh: "protected",
  no_authorization: "protected",
  other_scheme: "protected",
  empty_bearer: "protected",
  payment_token_protected: "protected",
  malformed_token: "protected",
  foreign_jwt: "protected",
  expired_token: "protected",
  revoked_token: "protected",
  payment_init_jwt: "paymentInit",
  wrong_payment_token: "paymentInit",
  payment_init: "paymentInit",
  login: "login",
  wrong_password: "login",
};

/**
 * The probes sent twice: what differs between the two answers is a per-request value (a request
 * id, a timestamp, a counter). The success and one refusal of every endpoint group, so every kind
 * of answer a client reads is seen twice; payment/init's second is another order (a provider may
 * refuse an order id twice), and a value that changed there is per creation.
 */
export const REPEATED_PROBES: readonly ProbeName[] = [
  "token_body",
  "wrong_secret",
  "protected_fresh",
  "no_authorization",
  "wrong_payment_token",
  "login",
  "wrong_password",
  "payment_init",
];

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
  /** Such a body as text (UTF-8), to read a message or a framework's page from. */
  text?: string;
  /** No body at all (zero bytes). */
  empty?: boolean;
}

export interface Observation {
  probe: ProbeName;
  /** What was sent, in words (never a credential). */
  sent: string;
  /** The path it was sent to (`/api/v2/auth/token`). */
  path?: string;
  answer: Answer;
  /** When it was sent (ms), when that is not the calibration's start: a recording's exchange. */
  at?: number;
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
  missing_key: "api_key_missing",
  malformed_json: "body_malformed_json",
  no_authorization: "credentials_missing",
  other_scheme: "authorization_not_bearer",
  empty_bearer: "bearer_token_empty",
  payment_token_protected: "payment_token_not_accepted",
  malformed_token: "token_malformed",
  // A JWT with a kid the sandbox does not know: AccessTokens refuses it as token_unknown_kid.
  foreign_jwt: "token_unknown_kid",
  expired_token: "token_expired",
  revoked_token: "token_revoked",
  payment_init_jwt: "access_token_on_payment_init",
  wrong_payment_token: "payment_token_unknown",
  wrong_password: "login_invalid_credentials",
};

const TOKEN_ERROR = ["foreign_jwt", "malformed_token"] as const;
const why = (what: string) => `not probed: answered as ${what}`;
const tokenError = (code: CatalogueCode) => ({ code, from: TOKEN_ERROR, why: why("the observed token error") });

/**
 * Sandbox codes no probe observes (or whose probe was not sent), answered like the nearest probe
 * that was: every token error as an observed token error, every missing credential as an observed
 * missing one, every rejected credential or payment token as an observed one. The first probe of
 * `from` that was observed refusing is the source; the table says which.
 */
export const INFERRED_CODES: ReadonlyArray<{ code: CatalogueCode; from: readonly ProbeName[]; why: string }> = [
  // Every token error of the catalogue (a token in the query is a missing one: below).
  ...(Object.keys(ERROR_CATALOGUE) as CatalogueCode[]).filter((c) => c.startsWith("token_") && c !== "token_in_query").map(tokenError),
  { code: "bearer_token_malformed", from: ["malformed_token", "foreign_jwt"], why: why("the token that is not a JWT") },
  { code: "bearer_token_empty", from: ["malformed_token", "foreign_jwt"], why: why("the token that is not a JWT") },
  { code: "authorization_not_bearer", from: ["no_authorization"], why: why("no Authorization") },
  { code: "token_in_query", from: ["no_authorization"], why: why("no Authorization (a token in the query is no token)") },
  { code: "api_key_missing", from: ["missing_secret"], why: why("the observed missing credential") },
  { code: "api_secret_missing", from: ["missing_key"], why: why("the observed missing credential") },
  { code: "login_username_missing", from: ["missing_key", "missing_secret"], why: why("the observed missing credential") },
  { code: "login_password_missing", from: ["missing_secret", "missing_key"], why: why("the observed missing credential") },
  { code: "login_body_missing", from: ["missing_key", "missing_secret"], why: why("the observed missing credential") },
  { code: "credentials_rejected", from: ["wrong_secret"], why: why("the wrong api_secret") },
  { code: "merchant_disabled", from: ["wrong_secret"], why: why("the wrong api_secret") },
  { code: "login_invalid_credentials", from: ["wrong_secret"], why: why("the wrong api_secret (no --login)") },
  { code: "payment_token_expired", from: ["wrong_payment_token"], why: why("the unknown payment token") },
  { code: "payment_token_revoked", from: ["wrong_payment_token"], why: why("the unknown payment token") },
  { code: "payment_token_not_accepted", from: ["wrong_payment_token"], why: why("the unknown payment token") },
];

export interface Observations {
  /** The provider's base URL (no credentials in it). */
  url: string;
  /** When the probing began (ms since 1970, the machine's clock), to read timestamps against. */
  startedAt: number;
  observed: Observation[];
  /** The second answer of each repeated probe (REPEATED_PROBES), sent right after the first. */
  repeats?: Observation[];
  skipped: Skipped[];
  /** --login's e-mail (not a secret), to recognise a merchant claim that holds it. */
  loginEmail?: string;
  /** The exp of --expired-token (decoded, never verified), to read "expired at <time>" in a message. */
  expiredTokenExp?: number;
  /** When the expired token was sent (ms), when not at startedAt (a recording's exchange). */
  expiredTokenSentAt?: number;
  /** Where the token answer's access token is (`access_token`), when it holds more than one JWT. */
  accessTokenPath?: string;
  /** What payment/init was sent (with --allow-writes), to recognise echoed fields. */
  paymentInitSent?: Record<string, string | number>;
}

/** An answer's words a client could read: its body (JSON as text, or the text) and its challenge. */
export function answerText(a: Answer): string {
  return `${a.json !== undefined ? JSON.stringify(a.json) : (a.text ?? "")}\n${a.headers["www-authenticate"] ?? ""}`;
}

/** When an observation's request was sent, in seconds: its own time (a recording's), else the calibration's start. */
export function nowOf(o: Observation, startS: number): number {
  return o.at === undefined ? startS : o.at / 1000;
}
