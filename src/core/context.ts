import type { Faker } from "@faker-js/faker";
import type { AccessTokens } from "./access-tokens.js";
import type { AnswerFacts, AnswerShaper } from "./answer-shaper.js";
import type { SandboxClock } from "./clock.js";
import type { SandboxSettings } from "./config.js";
import type { ShownUrl } from "./redact.js";
import type { KeyRing } from "./keys.js";
import type { Merchant, MerchantRegistry } from "./merchants.js";
import type { SandboxRequest, SandboxResponse } from "./http-types.js";
import type { RequestBody } from "./json-body.js";

/**
 * What a merchant API endpoint may use: the merchants, the token service, the settings and a
 * read-only view of the scenarios. Not the control plane's sessions, journal or reset: those are
 * in ControlContext (src/control/context.ts), which only control-plane endpoints receive.
 */
export interface EndpointContext {
  readonly version: string;
  /** Sandbox-wide settings (issuer, audience, body limit) and the defaults scenarios start from. */
  readonly settings: SandboxSettings;
  readonly merchants: MerchantRegistry;
  readonly ring: KeyRing;
  readonly tokens: AccessTokens;
  /** Seeded: ids and checkout URLs repeat run to run for the same seed. */
  readonly faker: Faker;
  /** The next token id (jti): unique across restarts and replicas, unless seededTokenIds. */
  newTokenId(): string;
  readonly scenarios: ScenarioLookup;
}

/**
 * What an endpoint sees of a scenario: its name, its settings and its clock. The rules, state and
 * sessions of a scenario belong to the pipeline and the control plane, not to endpoints.
 */
export interface ScenarioView {
  readonly name: string;
  readonly settings: SandboxSettings;
  /** The scenario's own clock (the sandbox clock plus the scenario's offset and rule changes). */
  readonly clock: SandboxClock;
  readonly merchants: readonly Merchant[];
  /** The response profile's renderer; undefined for oauth (today's answers, nothing extra per request). */
  readonly shaper: AnswerShaper | undefined;
  /** The session this scenario is the private copy of; undefined for a scenario loaded at start. */
  readonly sessionId: string | undefined;
}

/** The scenarios as endpoints may look them up. */
export interface ScenarioLookup {
  /** The scenarios loaded at start (not sessions' copies). */
  readonly loaded: readonly ScenarioView[];
  /** The scenario that owns this merchant. */
  of(merchant: Merchant): ScenarioView;
  /** The kids of every key some scenario still accepts: the JWKS. */
  acceptedKids(): Set<string>;
}

/** What a scenario rule changes about how the endpoint treats this one request. */
export interface RequestEffects {
  /** The credentials of this request are refused. */
  rejectCredentials?: boolean;
  /** The token this request gets is already expired, or not valid for `notBeforeSeconds`. */
  issue?: { expired?: boolean; notBeforeSeconds?: number };
}

/**
 * What one request did, filled in as the pipeline learns it: which scenario, which merchant, which
 * token, which rules fired. The log line (and later the journal) is made from this, never from raw
 * request values.
 */
export interface RequestTrace {
  endpoint: EndpointName;
  /** The request's path and query with every secret redacted: all an answer, the log or the journal may echo. */
  shown: ShownUrl;
  /** The request's body, decoded as JSON at most once, by attribution or the endpoint (whichever reads it first). */
  readonly body: RequestBody;
  /** The scenario the request was attributed to (the primary one when no merchant could be read). */
  scenario: ScenarioView;
  merchantId?: string;
  /**
   * The request proved it is `merchantId` (a matching secret or password, a payment token, a JWT
   * signed by a sandbox key). Unproven, it fires no rules and counts in no findings.
   */
  identityProven: boolean;
  /** The session whose base URL (`/s/{id}/…`) the request came under: only its merchants may act. */
  baseUrlSession?: string;
  /** The jti of the access token this request was issued, or the one it presented and had accepted. */
  tokenId?: string;
  /**
   * When the token this request was issued (token exchange, the deprecated login) expires: its
   * `exp` in epoch milliseconds, on the issuing scenario's clock. A number, formatted when the
   * journal is read (the QA page's timeline draws each token from issue to here).
   */
  tokenExpiresAtMs?: number;
  effects: RequestEffects;
  /** What a response profile may print of this request (its id, now, method, path). */
  readonly facts: AnswerFacts;
  /** `scenario/rule` of every rule that fired. */
  rules: string[];
  /**
   * Payment or cashout was called with the deprecated login's token (typ JWT): `accepted` (a 200
   * then carries the login's Deprecation, Sunset and Link) or `refused` (the `loginToken` setting).
   */
  loginToken?: "accepted" | "refused";
  /** Where the token endpoint found each credential (for the integration report). */
  credentialSources?: { apiKey: "body" | "header" | "both"; apiSecret: "body" | "header" | "both" };
}

export type EndpointName = "token" | "payment" | "cashout" | "payment-init" | "login" | "jwks" | "control" | "unknown";

/** An endpoint: merchant API endpoints take the EndpointContext, control-plane ones a wider context. */
export type Endpoint<C extends EndpointContext = EndpointContext> = (
  request: SandboxRequest,
  ctx: C,
  trace: RequestTrace,
) => Promise<SandboxResponse> | SandboxResponse;

/** A JSON response; `no-store` unless said otherwise, since almost everything here is about credentials. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): SandboxResponse {
  return {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
    body: JSON.stringify(body),
  };
}
