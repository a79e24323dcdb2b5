import type { SandboxClock } from "./clock.js";
import type { SandboxSettings } from "./config.js";
import type { ScenarioKeys } from "./scenario-keys.js";
import type { Merchant } from "./merchants.js";
import type { AccessClaims } from "./token-claims.js";
import type { TokenFormat } from "./token-format.js";

/** What issuing and verifying need to know about the scenario a merchant belongs to. */
export interface MerchantScope {
  readonly clock: SandboxClock;
  readonly settings: SandboxSettings;
  readonly keys: ScenarioKeys;
  /** How the scenario's tokens are written (its response profile's jwt section). */
  readonly tokenFormat: TokenFormat;
}

export interface VerifiedAccessToken {
  merchant: Merchant;
  /** An access token's claims; a login token's have `username` and `roles` instead of `client_id` and `scope`. */
  claims: AccessClaims;
  scopes: Set<string>;
  /** The token is the deprecated login's (typ JWT), accepted by the `loginToken` setting. */
  loginToken: boolean;
}
