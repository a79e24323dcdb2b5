import type { Faker } from "@faker-js/faker";
import type { AccessTokens } from "./access-tokens.js";
import type { SandboxClock } from "./clock.js";
import type { SandboxSettings } from "./config.js";
import type { KeyStore } from "./keys.js";
import type { MerchantRegistry } from "./merchants.js";
import type { SandboxResponse } from "./http-types.js";
import type { TokenLedger } from "./token-ledger.js";

/** Everything an endpoint may use: the state of one sandbox, shared by nothing else. */
export interface SandboxContext {
  readonly version: string;
  readonly settings: SandboxSettings;
  readonly clock: SandboxClock;
  readonly merchants: MerchantRegistry;
  readonly keys: KeyStore;
  readonly ledger: TokenLedger;
  readonly tokens: AccessTokens;
  /** Seeded: ids, checkout URLs and jti values repeat run to run for the same seed. */
  readonly faker: Faker;
  readonly scenarioNames: () => string[];
}

/**
 * What one request did, filled in as the pipeline learns it: which merchant, which token.
 * The log line (and later the journal) is made from this, never from raw request values.
 */
export interface RequestTrace {
  endpoint: EndpointName;
  merchantId?: string;
  tokenId?: string;
}

export type EndpointName =
  | "token"
  | "payment"
  | "cashout"
  | "payment-init"
  | "login"
  | "jwks"
  | "control"
  | "unknown";

export type Endpoint = (
  request: import("./http-types.js").SandboxRequest,
  ctx: SandboxContext,
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
