import type { SandboxClock } from "./clock.js";
import type { TokenLedger } from "./token-ledger.js";

/**
 * Why a token refused as expired ran out, when it was the sandbox's or the test's doing rather than
 * the client's: the journal records it on the refusal (`tokenExpiry`), so the report, a function of
 * the journal, does not blame the client for a renewal it could not have made in time.
 *
 * - `early`: expired before its exp (a rule's or a session action's expire_token).
 * - `clock_jump`: one move of the clock (the control plane's, a rule's advance_clock) carried it
 *   from before its renewal point to past its exp: the clock never read a time at which a client
 *   renewing proactively would have renewed it.
 */
export type ForcedExpiry = "early" | "clock_jump";

/**
 * The share of a token's lifetime after which a client renews it (the report's advice: at 90 %).
 * A jump that starts later, inside that window, could have been seen coming.
 */
export const RENEWAL_POINT = 0.9;

/** Why `jti`, just refused as expired on `clock`, expired, when the sandbox or the test forced it. */
export function forcedExpiry(ledger: TokenLedger, clock: SandboxClock, jti: string): ForcedExpiry | undefined {
  const token = ledger.get(jti);
  // Not issued by this sandbox's exchange (minted) or no longer recorded: nothing to say.
  if (!token) return undefined;
  const early = ledger.expiredEarlyAt(jti, token.merchantId, token.issuedAt);
  if (early !== undefined && early < token.expiresAt && early <= clock.nowSeconds()) return "early";
  const renewFromMs = (token.issuedAt + RENEWAL_POINT * (token.expiresAt - token.issuedAt)) * 1000;
  return clock.skippedOver(renewFromMs, token.expiresAt * 1000) ? "clock_jump" : undefined;
}
