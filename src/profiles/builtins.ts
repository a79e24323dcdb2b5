import type { ProfileFile } from "./schema.js";

/**
 * The built-in profiles. `oauth` is today's answers byte for byte: it declares nothing, so no
 * renderer is made for it and nothing extra runs per request.
 */

const OAUTH: ProfileFile = {
  name: "oauth",
  description: "OAuth 2.0 token answers and RFC 9457 problem+json refusals with RFC 6750 challenges (the sandbox's own shapes)",
};

/** Symfony's LexikJWTAuthenticationBundle: `{"token"}`, and `{"code", "message"}` refusals. */
const LEXIK: ProfileFile = {
  name: "lexik",
  description: "Symfony LexikJWTAuthenticationBundle: {token} on success, {code: <status>, message} refusals",
  token: { body: { token: "{{access_token}}" } },
  refusal: { contentType: "application/json", body: { code: "{{status}}", message: "{{message}}" } },
  login: { body: { token: "{{access_token}}" } },
};

/** camelCase JSON members. */
const CAMEL: ProfileFile = {
  name: "camel",
  description: "camelCase members: {accessToken, tokenType, expiresIn}; {errorCode, errorMessage, status} refusals",
  token: { body: { accessToken: "{{access_token}}", tokenType: "{{token_type}}", expiresIn: "{{expires_in}}" } },
  refusal: { contentType: "application/json", body: { errorCode: "{{code}}", errorMessage: "{{message}}", status: "{{status}}" } },
  paymentInit: {
    body: {
      paymentId: "{{payment_id}}",
      checkoutUrl: "{{checkout_url}}",
      merchantId: "{{merchant_id}}",
      status: "{{status}}",
      createdAt: "{{created_at}}",
      expiresAt: "{{expires_at}}",
    },
  },
};

/** One envelope around every answer: {status, code, message, data}. */
const ENVELOPE: ProfileFile = {
  name: "envelope",
  description: 'Every answer in one envelope: {"status": "success"|"error", "code": <http status>, "message", "data"}',
  token: {
    body: {
      status: "success",
      code: 200,
      message: "Token issued",
      data: { access_token: "{{access_token}}", token_type: "{{token_type}}", expires_in: "{{expires_in}}" },
    },
  },
  refusal: {
    contentType: "application/json",
    body: { status: "error", code: "{{status}}", message: "{{message}}", data: { error_code: "{{code}}" } },
  },
  paymentInit: { body: { status: "success", code: 201, message: "Payment created", data: "{{sandbox}}" } },
  login: { body: { status: "success", code: 200, message: "Logged in", data: { token: "{{access_token}}" } } },
  protected: { body: { status: "success", code: 200, message: "OK", data: "{{sandbox}}" } },
};

export const BUILT_IN_PROFILES: Readonly<Record<string, ProfileFile>> = { oauth: OAUTH, lexik: LEXIK, camel: CAMEL, envelope: ENVELOPE };
export const BUILT_IN_NAMES = Object.keys(BUILT_IN_PROFILES);
