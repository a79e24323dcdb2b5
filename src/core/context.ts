import type { Faker } from "@faker-js/faker";
import type { AccessTokens } from "./access-tokens.js";
import type { SandboxClock } from "./clock.js";
import type { PaymentTokenTransport, SandboxSettings } from "./config.js";
import type { ShownUrl } from "./redact.js";
import type { KeyRing } from "./keys.js";
import type { Merchant, MerchantRegistry } from "./merchants.js";
import type { SandboxRequest, SandboxResponse } from "./http-types.js";
import type { TokenLedger } from "./token-ledger.js";
import type { ScenarioInstance } from "../scenarios/instance.js";
import type { Journal } from "../control/journal.js";
import type { SessionStore } from "../control/sessions.js";
import type { HostPolicy } from "../control/access.js";

/** Everything an endpoint may use: the state of one sandbox, shared by nothing else. */
export interface SandboxContext {
  readonly version: string;
  /** Sandbox-wide settings (issuer, audience, body limit) and the defaults scenarios start from. */
  readonly settings: SandboxSettings;
  /** The sandbox clock; every scenario's clock follows it. */
  readonly clock: SandboxClock;
  readonly merchants: MerchantRegistry;
  readonly ring: KeyRing;
  readonly ledger: TokenLedger;
  readonly tokens: AccessTokens;
  /** Seeded: ids and checkout URLs repeat run to run for the same seed. */
  readonly faker: Faker;
  /** The next token id (jti): unique across restarts and replicas, unless seededTokenIds. */
  newTokenId(): string;
  readonly scenarios: ScenarioSet;
  /** Waits (scenario delays); injectable so tests need not sleep. */
  readonly sleep: (ms: number) => Promise<void>;
  readonly journal: Journal;
  readonly sessions: SessionStore;
  readonly control: { readonly enabled: boolean; readonly adminToken: string | undefined; readonly allowedHosts: HostPolicy };
  /** The whole sandbox back to how it started (POST /__sandbox/reset). */
  resetAll(): void;
}

/** The loaded scenarios and who owns which merchant. */
export interface ScenarioSet {
  readonly all: readonly ScenarioInstance[];
  /** The scenarios loaded at start (not sessions' copies). */
  readonly loaded: readonly ScenarioInstance[];
  /** The scenario whose rules and settings apply to requests no merchant can be read from. */
  readonly primary: ScenarioInstance;
  of(merchant: Merchant): ScenarioInstance;
  /** Every place a payment token may be sent, across scenarios (payment/init looks in each). */
  paymentTokenTransports(): PaymentTokenTransport[];
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
  scenario: ScenarioInstance;
  merchantId?: string;
  /**
   * The request proved it is `merchantId` (a matching secret or password, a payment token, a JWT
   * signed by a sandbox key). Unproven, it fires no rules and counts in no findings.
   */
  identityProven: boolean;
  tokenId?: string;
  effects: RequestEffects;
  /** `scenario/rule` of every rule that fired. */
  rules: string[];
  /** Where the token endpoint found each credential (for the integration report). */
  credentialSources?: { apiKey: "body" | "header" | "both"; apiSecret: "body" | "header" | "both" };
}

export type EndpointName = "token" | "payment" | "cashout" | "payment-init" | "login" | "jwks" | "control" | "unknown";

export type Endpoint = (request: SandboxRequest, ctx: SandboxContext, trace: RequestTrace) => Promise<SandboxResponse> | SandboxResponse;

/** A JSON response; `no-store` unless said otherwise, since almost everything here is about credentials. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): SandboxResponse {
  return {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
    body: JSON.stringify(body),
  };
}
