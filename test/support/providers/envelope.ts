import { type ProviderOptions, type RefusalKind, type RunningProvider, startProvider } from "./kit.js";

/**
 * A provider that wraps every answer in one envelope, `{"status", "code", "message", "data"}`:
 * `code` repeats the HTTP status, refusals carry their own error code in `data.error_code`. A
 * missing field is 422 (the sandbox says 400) and the JWT on payment/init 403 (the sandbox says
 * 401). RS256 access tokens (typ at+jwt) of 30 minutes, the merchant in `sub`.
 */
const REFUSALS: Record<RefusalKind, [number, string, string]> = {
  bad_credentials: [401, "AUTH_BAD_CREDENTIALS", "The API key or secret is not valid."],
  unknown_key: [401, "AUTH_BAD_CREDENTIALS", "The API key or secret is not valid."],
  bad_login: [401, "AUTH_BAD_CREDENTIALS", "The e-mail or password is not valid."],
  missing_secret: [422, "VALIDATION_FAILED", "The request is missing a required field."],
  malformed_json: [400, "BAD_JSON", "The request body could not be parsed."],
  no_token: [401, "AUTH_REQUIRED", "Authentication is required for this resource."],
  invalid_token: [401, "TOKEN_INVALID", "The access token is not valid."],
  expired_token: [401, "TOKEN_EXPIRED", "The access token has expired, request a new one."],
  jwt_on_payment_init: [403, "PAYMENT_TOKEN_REQUIRED", "Payment initialisation requires the merchant payment token."],
  unknown_payment_token: [401, "PAYMENT_TOKEN_INVALID", "The payment token is not valid."],
};

export const ENVELOPE_CREDENTIALS = {
  apiKey: "env-key-51c0aa",
  apiSecret: "env-secret-77ad0c93e1b2",
  paymentToken: "env-pay-e0b1d7c4a9f2",
  email: "shop@envelope-provider.test",
  password: "env-password-c4d2e9",
  merchantId: "m_8812",
};

export function startEnvelopeProvider(options?: ProviderOptions): Promise<RunningProvider> {
  return startProvider(
    {
      alg: "RS256",
      typ: "at+jwt",
      ttlSeconds: 1800,
      claims: (merchantId) => ({ sub: merchantId, iss: "https://envelope-provider.test", aud: "merchant-api", scope: "payment cashout" }),
      token: (jwt, ttl) => ({
        status: 200,
        body: { status: "success", code: 200, message: "Token issued", data: { access_token: jwt, token_type: "Bearer", expires_in: ttl } },
      }),
      refusal: (kind) => {
        const [status, code, message] = REFUSALS[kind];
        return { status, body: { status: "error", code: status, message, data: { error_code: code } } };
      },
      paymentInit: (id) => ({
        status: 200,
        body: {
          status: "success",
          code: 200,
          message: "Payment created",
          data: { payment_id: id, checkout_url: `https://envelope-provider.test/pay/${id}` },
        },
      }),
    },
    ENVELOPE_CREDENTIALS,
    options,
  );
}
