import { type ProviderOptions, type RefusalKind, type RunningProvider, startProvider } from "./kit.js";

/**
 * A provider with shapes no built-in profile has: the token nested under `result` with its
 * `validity` in minutes and an ISO `expiresAt`, refusals `{"error": {"code": <string>, "message"}}`
 * with upper-case string codes, an unknown key answered 403, no WWW-Authenticate, ES256 tokens
 * (typ JWT) of one hour with the merchant in a `merchant_id` claim.
 *
 * `changed` makes it the provider after an unannounced release: `accessToken` renamed to `token`,
 * and an expired token answered 403.
 */
const REFUSALS: Record<RefusalKind, [number, string, string]> = {
  bad_credentials: [401, "INVALID_CREDENTIALS", "The client credentials are invalid."],
  unknown_key: [403, "UNKNOWN_CLIENT", "This client is not registered."],
  bad_login: [401, "INVALID_CREDENTIALS", "The client credentials are invalid."],
  missing_secret: [400, "MISSING_FIELD", "A required field is missing: apiSecret."],
  malformed_json: [400, "MALFORMED_REQUEST", "The request body is not valid JSON."],
  no_token: [401, "UNAUTHENTICATED", "No access token was presented."],
  invalid_token: [401, "TOKEN_INVALID", "The access token could not be validated."],
  expired_token: [401, "TOKEN_EXPIRED", "The access token is past its validity."],
  jwt_on_payment_init: [401, "WRONG_TOKEN_TYPE", "Use the payment token for payment initialisation."],
  unknown_payment_token: [401, "PAYMENT_TOKEN_UNKNOWN", "The payment token is unknown."],
};

export const NESTED_CREDENTIALS = {
  apiKey: "nst-key-0f9e3d",
  apiSecret: "nst-secret-4a61b8d20c7e",
  paymentToken: "nst-pay-91c3e0a7f2d8",
  email: "shop@nested-provider.test",
  password: "nst-password-8b0f2a",
  merchantId: "NST-000731",
};

export function startNestedProvider(options: ProviderOptions & { changed?: boolean } = {}): Promise<RunningProvider> {
  const changed = options.changed === true;
  return startProvider(
    {
      alg: "ES256",
      typ: "JWT",
      ttlSeconds: 3600,
      claims: (merchantId) => ({ merchant_id: merchantId, iss: "nested-provider", aud: "payments" }),
      token: (jwt, ttl, exp) => ({
        status: 200,
        body: { result: { [changed ? "token" : "accessToken"]: jwt, validity: ttl / 60, expiresAt: new Date(exp * 1000).toISOString() } },
      }),
      refusal: (kind) => {
        const [status, code, message] = REFUSALS[kind];
        return { status: changed && kind === "expired_token" ? 403 : status, body: { error: { code, message } } };
      },
      paymentInit: (id) => ({ status: 201, body: { result: { paymentId: id, redirectUrl: `https://nested-provider.test/checkout?p=${id}` } } }),
    },
    NESTED_CREDENTIALS,
    options,
  );
}
