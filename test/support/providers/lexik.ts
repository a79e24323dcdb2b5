import { type ProviderOptions, type RefusalKind, type RunningProvider, startProvider } from "./kit.js";

/**
 * A provider in the shape of Symfony's LexikJWTAuthenticationBundle: the token is `{"token": ...}`
 * (no lifetime in the body, the JWT's exp says it), every refusal `{"code": <status>, "message"}`,
 * a bare `WWW-Authenticate: Bearer` on 401s, RS256 tokens with `username` and `roles`, and the
 * e-mail/password login.
 */
export const LEXIK_MESSAGES: Record<RefusalKind, [number, string]> = {
  bad_credentials: [401, "Invalid credentials."],
  unknown_key: [401, "Invalid credentials."],
  bad_login: [401, "Invalid credentials."],
  missing_secret: [400, 'The key "api_secret" must be provided.'],
  malformed_json: [400, "Invalid JSON."],
  no_token: [401, "JWT Token not found"],
  invalid_token: [401, "Invalid JWT Token"],
  expired_token: [401, "Expired JWT Token"],
  jwt_on_payment_init: [401, "Invalid payment token."],
  unknown_payment_token: [401, "Invalid payment token."],
};

export const LEXIK_CREDENTIALS = {
  apiKey: "lexik-key-7d1f40",
  apiSecret: "lexik-secret-9b2e4c7a1f03",
  paymentToken: "lexik-pay-3c8e1a9d6b55",
  email: "shop@lexik-provider.test",
  password: "lexik-password-5e2f81",
  merchantId: "shop-42",
};

export function startLexikProvider(options?: ProviderOptions): Promise<RunningProvider> {
  return startProvider(
    {
      alg: "RS256",
      typ: "JWT",
      ttlSeconds: 3600,
      claims: () => ({ username: LEXIK_CREDENTIALS.email, roles: ["ROLE_MERCHANT"] }),
      token: (jwt) => ({ status: 200, body: { token: jwt } }),
      login: (jwt) => ({ status: 200, body: { token: jwt } }),
      refusal: (kind) => {
        const [status, message] = LEXIK_MESSAGES[kind];
        return { status, body: { code: status, message }, ...(status === 401 && { headers: { "www-authenticate": "Bearer" } }) };
      },
      paymentInit: (id) => ({ status: 201, body: { id, url: `https://pay.lexik-provider.test/checkout/${id}` } }),
    },
    LEXIK_CREDENTIALS,
    options,
  );
}
