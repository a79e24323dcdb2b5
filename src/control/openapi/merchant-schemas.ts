import { OAUTH_ERRORS } from "../../core/error-catalogue.js";
import { errorCodeSchema } from "./error-codes.js";
import { ref } from "./ref.js";

/**
 * `components.schemas` of the OpenAPI document, merchant API half: the bodies the API takes and
 * gives, and the refusal body. Field lists follow the endpoints' code (src/endpoints, src/core).
 */

const isoTime = { type: "string", format: "date-time" } as const;

export const merchantSchemas = {
  ProblemDetails: {
    type: "object",
    description:
      "Every refusal (RFC 9457 `application/problem+json`), which also carries the OAuth members `error` and `error_description` so OAuth clients parse it too. `detail` and `error_description` are the same text: what was wrong and how to fix it. It never contains a secret, password, payment token or JWT.",
    required: ["type", "title", "status", "detail", "code", "error_description", "instance"],
    properties: {
      type: {
        type: "string",
        format: "uri",
        description: "`urn:merchant-sandbox:problem:<code>`.",
        examples: ["urn:merchant-sandbox:problem:wrong_api_secret"],
      },
      title: { type: "string", description: "The status's reason phrase.", examples: ["Unauthorized"] },
      status: { type: "integer", minimum: 400, maximum: 599 },
      detail: { type: "string" },
      code: ref("schemas", "ErrorCode"),
      error: { ...ref("schemas", "OAuthError"), description: "Absent on a 401 for a request with no credentials at all (RFC 6750 §3.1)." },
      error_description: { type: "string" },
      instance: { type: "string", description: "The request path.", examples: ["/api/v2/auth/token"] },
    },
    examples: [
      {
        type: "urn:merchant-sandbox:problem:wrong_api_secret",
        title: "Unauthorized",
        status: 401,
        detail: "The api_secret does not match the api_key 'sandbox-api-key'. Check that the secret belongs to this key and was not rotated.",
        code: "wrong_api_secret",
        error: "invalid_client",
        error_description:
          "The api_secret does not match the api_key 'sandbox-api-key'. Check that the secret belongs to this key and was not rotated.",
        instance: "/api/v2/auth/token",
      },
    ],
  },
  ErrorCode: errorCodeSchema,
  OAuthError: {
    type: "string",
    description: "The OAuth-style `error` member (RFC 6749 §5.2, RFC 6750 §3.1), extended with one value per HTTP refusal.",
    enum: OAUTH_ERRORS,
  },
  TokenRequest: {
    type: "object",
    description:
      "The credentials. Each may come instead (or as well) as the X-Api-Key / X-Api-Secret header; a credential sent both ways must have the same value (precedence setting `must_match`; `header`, `body` and `reject_both` are the others). Other fields are ignored.",
    properties: {
      api_key: { type: "string", minLength: 1, examples: ["sandbox-api-key"] },
      api_secret: { type: "string", minLength: 1, examples: ["sandbox-api-secret"] },
    },
    examples: [{ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }],
  },
  TokenResponse: {
    type: "object",
    required: ["access_token", "token_type", "expires_in"],
    properties: {
      access_token: {
        type: "string",
        description:
          "A JWS compact JWT: header `alg` (RS256 by default, ES256 or HS256 by setting), `kid` (RFC 7638 thumbprint), `typ: at+jwt` (RFC 9068); claims iss, sub (merchant id), aud, iat, exp, jti, client_id (the api_key), scope. Verify it with GET /.well-known/jwks.json.",
      },
      token_type: { const: "Bearer" },
      expires_in: { type: "integer", minimum: 1, description: "Lifetime in seconds (3600 by default, `--token-ttl`).", examples: [3600] },
    },
  },
  ProtectedPlaceholder: {
    type: "object",
    description: "What every authenticated payment or cashout call answers: business behaviour is not simulated, so it says who did what.",
    required: ["sandbox", "merchant_id", "operation", "scope", "token_id", "expires_at", "note"],
    properties: {
      sandbox: { const: true },
      merchant_id: { type: "string", examples: ["merchant_sandbox_default"] },
      operation: { type: "string", description: "`<METHOD> <path>`.", examples: ["GET /api/v2/payment/anything"] },
      scope: { type: "string", enum: ["payment", "cashout"] },
      token_id: { type: "string", description: "The access token's `jti`." },
      expires_at: { ...isoTime, description: "The access token's `exp`." },
      note: { type: "string" },
    },
  },
  PaymentInitRequest: {
    type: "object",
    description:
      "The payload is open (the API's spec does not show it), and read only when declared as JSON. `amount`, `currency`, `order_id` and `reference` are echoed in the answer when they are plain strings (≤ 200 characters) or finite numbers. With the transport setting `body:<field>`, the merchant payment token travels in that field, and the body must then be declared JSON.",
    properties: {
      amount: { type: ["number", "string"], examples: [1999] },
      currency: { type: "string", examples: ["EUR"] },
      order_id: { type: ["string", "number"] },
      reference: { type: ["string", "number"] },
    },
    additionalProperties: true,
  },
  PaymentInitResponse: {
    type: "object",
    required: ["payment_id", "checkout_url", "merchant_id", "status", "created_at", "expires_at", "note"],
    properties: {
      payment_id: {
        type: "string",
        pattern: "^pay_[a-z0-9]{24}$",
        description: "Generated by a faker seeded with `--seed`: the same seed gives the same sequence.",
      },
      checkout_url: {
        type: "string",
        format: "uri",
        description: "A placeholder that leads nowhere: hosted checkout is not simulated.",
        examples: ["https://checkout.sandbox.test/pay/pay_0123456789abcdefghijklmn"],
      },
      merchant_id: { type: "string" },
      status: { const: "created" },
      created_at: { ...isoTime, description: "On the merchant's scenario clock." },
      expires_at: { ...isoTime, description: "`created_at` + 30 minutes." },
      amount: { type: ["number", "string"] },
      currency: { type: "string" },
      order_id: { type: ["string", "number"] },
      reference: { type: ["string", "number"] },
      note: { type: "string" },
    },
  },
  LoginRequest: {
    type: "object",
    description: "Symfony json_login / LexikJWTAuthenticationBundle shape: `username` (or `email`) and `password`.",
    required: ["password"],
    anyOf: [{ required: ["username"] }, { required: ["email"] }],
    properties: {
      username: { type: "string", minLength: 1, examples: ["merchant@sandbox.test"] },
      email: { type: "string", minLength: 1, description: "Read when `username` is not a string." },
      password: { type: "string", minLength: 1, examples: ["sandbox-password"] },
    },
  },
  LoginResponse: {
    type: "object",
    required: ["token"],
    properties: {
      token: {
        type: "string",
        description:
          'A JWT with `typ: JWT` and `roles: ["ROLE_MERCHANT"]`, not an access token: the payment and cashout groups accept it with the Deprecation, Sunset and Link headers, or refuse it (`token_not_access_token`) with `--login-token refused`.',
      },
    },
  },
  LexikError: {
    type: "object",
    description:
      "The deprecated login's failure body, exactly LexikJWTAuthenticationBundle's (not problem+json): integrations written against it parse this.",
    required: ["code", "message"],
    properties: { code: { const: 401 }, message: { const: "Invalid credentials." } },
  },
  Jwks: {
    type: "object",
    description: "RFC 7517 key set: every public key some loaded scenario still accepts (two during a rotation overlap); empty with HS256.",
    required: ["keys"],
    properties: { keys: { type: "array", items: ref("schemas", "Jwk") } },
  },
  Jwk: {
    type: "object",
    required: ["kty", "kid", "alg", "use"],
    properties: {
      kty: { type: "string", enum: ["RSA", "EC"] },
      kid: { type: "string", description: "The key's RFC 7638 thumbprint; tokens name it in their header." },
      alg: { type: "string", enum: ["RS256", "ES256"] },
      use: { const: "sig" },
      n: { type: "string", description: "RSA modulus (base64url)." },
      e: { type: "string", description: "RSA exponent (base64url)." },
      crv: { const: "P-256" },
      x: { type: "string" },
      y: { type: "string" },
    },
  },
} as const;
