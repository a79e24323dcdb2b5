import type { EndpointName, RequestTrace, ScenarioLookup } from "./context.js";
import { SessionCredentialsMismatch } from "./errors.js";
import type { Merchant } from "./merchants.js";

/**
 * A request under a session's base URL (`/s/{id}/…`) may only act as one of that session's
 * merchants. The pipeline refuses the credentials attribution read; endpoints check again the
 * merchant they authenticate, which may differ (the token endpoint reads header and body in the
 * session scenario's precedence, payment/init only the session's payment-token transport), before
 * anything is issued or changed.
 */
export function requireSessionMerchant(trace: RequestTrace, merchant: Merchant, scenarios: ScenarioLookup): void {
  const session = trace.baseUrlSession;
  if (session === undefined || trace.scenario.merchants.some((m) => m.id === merchant.id)) return;
  throw sessionCredentialsMismatch(session, trace.endpoint, scenarios.of(merchant).sessionId !== undefined);
}

/**
 * The refusal of credentials that are not the base URL's session's. Names neither the credentials
 * nor the other session: only what to change.
 */
export function sessionCredentialsMismatch(id: string, endpoint: EndpointName, otherIsSession: boolean): SessionCredentialsMismatch {
  const whose = otherIsSession ? "another session's merchant" : "a merchant that belongs to no session";
  const challenge = endpoint === "token" ? "api-key" : endpoint === "login" ? undefined : "bearer";
  return new SessionCredentialsMismatch(
    `This request was sent under the base URL of session '${id}' but carries the credentials of ${whose}. Use this session's credentials (POST /__sandbox/sessions answered them; GET /__sandbox/sessions/${id} shows them again), or send the request to the base_url of the session the credentials belong to.`,
    challenge,
  );
}
