import type { CodeFile, ProfileFile } from "./schema.js";

/**
 * The built-in profiles. `oauth` is today's answers byte for byte: it declares nothing, so no
 * renderer is made for it and nothing extra runs per request.
 */

const OAUTH: ProfileFile = {
  name: "oauth",
  description: "OAuth 2.0 token answers and RFC 9457 problem+json refusals with RFC 6750 challenges (the sandbox's own shapes)",
};

/** RFC 6750 §3.1's error_uri, as Spring Security's challenges carry it. */
const RFC6750_URI = "https://tools.ietf.org/html/rfc6750#section-3.1";

/** A Lexik failure: JWTAuthenticationFailureResponse's `{"code", "message"}` with its bare `Bearer` challenge. */
const lexikFailure = (message: string, status = 401) =>
  ({ status, message, contentType: "application/json", body: { code: "{{status}}", message: "{{message}}" }, wwwAuthenticate: "Bearer" }) as const;

/**
 * Symfony with LexikJWTAuthenticationBundle, as its sources answer (cited in `source`): Lexik's
 * failure response for every token and credentials problem (the message text is the contract:
 * clients renew on "Expired JWT Token"), Symfony's ProblemNormalizer body for the kernel's
 * errors (400, 403, 404, 405, 415) as a production app sends them, and Lexik's token: typ JWT, no
 * kid, `username` (the login e-mail) and `roles`, no clock skew.
 */
const LEXIK: ProfileFile = {
  name: "lexik",
  description: "Symfony + LexikJWTAuthenticationBundle: {token} on success, Lexik's {code, message} failures with their exact texts",
  source:
    "lexik/LexikJWTAuthenticationBundle 3.x@0f384f0: Response/JWTAuthenticationFailureResponse.php, Response/JWTCompatAuthenticationFailureResponse.php, Security/Authenticator/JWTAuthenticator.php, Exception/{Missing,Invalid,Expired}TokenException.php, Security/Http/Authentication/AuthenticationFailureHandler.php, Response/JWTAuthenticationSuccessResponse.php, Encoder/LcobucciJWTEncoder.php; symfony/symfony 7.2@5feb749: HttpFoundation/JsonResponse.php, HttpFoundation/ResponseHeaderBag.php, Serializer/Normalizer/ProblemNormalizer.php, Security/Core/Exception/BadCredentialsException.php",
  headers: { "Cache-Control": "no-cache, private" },
  token: { body: { token: "{{access_token}}" } },
  login: { body: { token: "{{access_token}}" } },
  refusal: {
    contentType: "application/json",
    body: { type: "https://tools.ietf.org/html/rfc2616#section-10", title: "An error occurred", status: "{{status}}", detail: "{{status_text}}" },
    wwwAuthenticate: "omit",
  },
  codes: {
    credentials_missing: lexikFailure("JWT Token not found"),
    authorization_not_bearer: lexikFailure("JWT Token not found"),
    bearer_token_malformed: lexikFailure("JWT Token not found"),
    token_in_query: lexikFailure("JWT Token not found"),
    bearer_token_empty: lexikFailure("Invalid JWT Token"),
    token_malformed: lexikFailure("Invalid JWT Token"),
    token_encrypted: lexikFailure("Invalid JWT Token"),
    token_algorithm_rejected: lexikFailure("Invalid JWT Token"),
    token_kid_missing: lexikFailure("Invalid JWT Token"),
    token_unknown_kid: lexikFailure("Invalid JWT Token"),
    token_signature_invalid: lexikFailure("Invalid JWT Token"),
    token_unsupported: lexikFailure("Invalid JWT Token"),
    token_claims_invalid: lexikFailure("Invalid JWT Token"),
    token_not_access_token: lexikFailure("Invalid JWT Token"),
    token_wrong_issuer: lexikFailure("Invalid JWT Token"),
    token_wrong_audience: lexikFailure("Invalid JWT Token"),
    token_not_yet_valid: lexikFailure("Invalid JWT Token"),
    token_revoked: lexikFailure("Invalid JWT Token"),
    token_expired: lexikFailure("Expired JWT Token"),
    token_unknown_merchant: lexikFailure("Invalid credentials."),
    merchant_disabled: lexikFailure("Invalid credentials."),
    unknown_api_key: lexikFailure("Invalid credentials."),
    wrong_api_secret: lexikFailure("Invalid credentials."),
    credentials_rejected: lexikFailure("Invalid credentials."),
    login_invalid_credentials: lexikFailure("Invalid credentials."),
    access_token_on_payment_init: lexikFailure("Invalid credentials."),
    payment_token_unknown: lexikFailure("Invalid credentials."),
    payment_token_expired: lexikFailure("Invalid credentials."),
    payment_token_revoked: lexikFailure("Invalid credentials."),
    payment_token_not_accepted: lexikFailure("Invalid credentials."),
  },
  // lcobucci/jwt's header (typ, alg; no kid) and Lexik's claims: iat, exp, roles, username (the
  // login e-mail: user_id_claim), no iss or aud, clock_skew 0 (RESEARCH-24 §1.4).
  jwt: {
    typ: "JWT",
    kid: false,
    issuer: "none",
    audience: "none",
    merchantClaim: "username",
    merchantValue: "login",
    claims: { roles: ["ROLE_USER"] },
    leeway: 0,
  },
};

/** A Spring Security resource server's challenge: an empty body, everything in WWW-Authenticate. */
const springChallenge = (error: string, message: string, status = 401) =>
  ({
    status,
    message,
    empty: true,
    wwwAuthenticate: `Bearer error="${error}", error_description="{{message}}", error_uri="${RFC6750_URI}"`,
  }) as const;
const decodeError = (reason: string) => springChallenge("invalid_token", `An error occurred while attempting to decode the Jwt: ${reason}`);

/**
 * Spring Security's OAuth 2.0 resource server with Spring Boot, as their sources answer (cited in
 * `source`): every bearer refusal an empty body with the challenge (its description is the
 * contract: "Jwt expired at …"), a bare `Bearer` when no token came (a query token is ignored),
 * Spring Boot's `{timestamp, status, error, path}` error body elsewhere, Spring Security's default
 * headers, and a token with a kid and no typ, accepted 60 s past its exp.
 */
const SPRING: ProfileFile = {
  name: "spring",
  description: "Spring Security resource server + Spring Boot: empty-bodied 401/403 with the Bearer challenge, Boot's error body elsewhere",
  source:
    "spring-projects/spring-security 6.5.11: oauth2-resource-server BearerTokenAuthenticationEntryPoint.java, BearerTokenAccessDeniedHandler.java, DefaultBearerTokenResolver.java, BearerTokenErrors.java, oauth2-jose JwtTimestampValidator.java, NimbusJwtDecoder.java; spring-projects/spring-boot v3.5.16: DefaultErrorAttributes.java, BasicErrorController.java, JacksonAutoConfiguration.java",
  headers: {
    "Cache-Control": "no-cache, no-store, max-age=0, must-revalidate",
    Pragma: "no-cache",
    Expires: "0",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-XSS-Protection": "0",
  },
  refusal: {
    contentType: "application/json",
    body: { timestamp: "{{now:rfc3339-ms-offset}}", status: "{{status}}", error: "{{status_text}}", path: "{{path}}" },
    wwwAuthenticate: "omit",
    groups: {
      protected: {
        message: "An error occurred while attempting to decode the Jwt: Signed JWT rejected: Invalid signature",
        empty: true,
        wwwAuthenticate: `Bearer error="invalid_token", error_description="{{message}}", error_uri="${RFC6750_URI}"`,
      },
    },
  },
  codes: {
    credentials_missing: { status: 401, empty: true, wwwAuthenticate: "Bearer" },
    authorization_not_bearer: { status: 401, empty: true, wwwAuthenticate: "Bearer" },
    token_in_query: { status: 401, empty: true, wwwAuthenticate: "Bearer" },
    bearer_token_empty: springChallenge("invalid_token", "Bearer token is malformed"),
    bearer_token_malformed: springChallenge("invalid_token", "Bearer token is malformed"),
    authorization_header_repeated: springChallenge("invalid_request", "Found multiple bearer tokens in the request", 400),
    token_malformed: decodeError("Malformed token"),
    token_signature_invalid: decodeError("Signed JWT rejected: Invalid signature"),
    token_unknown_kid: decodeError("Signed JWT rejected: Another algorithm expected, or no matching key(s) found"),
    token_expired: decodeError("Jwt expired at {{token_expires_at:rfc3339}}"),
    insufficient_scope: springChallenge("insufficient_scope", "The request requires higher privileges than provided by the access token.", 403),
  },
  // A Spring Authorization Server token (Nimbus): a kid, no typ; JwtTimestampValidator's 60 s skew.
  jwt: { typ: "none", kid: true, leeway: 60 },
};

/** A tymon/jwt-auth middleware refusal: Laravel's `{"message"}` with the `jwt-auth` challenge. */
const tymon = (message: string) => ({ status: 401, message, wwwAuthenticate: "jwt-auth" }) as const;
/** Laravel's validation failure for one required field (ValidationException, Handler::invalidJson). */
const required = (field: string): CodeFile => {
  const message = `The ${field.replace(/_/g, " ")} field is required.`;
  return { status: 422, message, body: { message: "{{message}}", errors: { [field]: [message] } } };
};

/**
 * Laravel with tymon/jwt-auth's `jwt.auth` middleware, as their sources answer (cited in `source`):
 * `{"message"}` refusals with tymon's texts and its `jwt-auth` challenge, 422 validation errors
 * for a missing credential, `{"error": "Unauthorized"}` for wrong ones (tymon's documented login),
 * the protected call's `{"success": true, "data"}`, and tymon's token: typ JWT, no kid, `sub` and
 * `prv`, expired the second its exp passes.
 */
const LARAVEL: ProfileFile = {
  name: "laravel",
  description: "Laravel + tymon/jwt-auth: {message} refusals with tymon's texts, 422 validation errors, {success, data} answers",
  source:
    "tymondesigns/jwt-auth 2.1.1: src/Http/Middleware/BaseMiddleware.php, src/Claims/Expiration.php, src/Manager.php, src/Validators/TokenValidator.php, src/Providers/JWT/Lcobucci.php, src/Claims/Factory.php, config/config.php, docs/quick-start.md; laravel/framework 13.x@bd71b45: src/Illuminate/Foundation/Exceptions/Handler.php (unauthenticated, invalidJson, prepareJsonResponse), src/Illuminate/Routing/AbstractRouteCollection.php, src/Illuminate/Translation/lang/en/validation.php",
  headers: { "Cache-Control": "no-cache, private" },
  token: { body: { access_token: "{{access_token}}", token_type: "bearer", expires_in: "{{expires_in}}" } },
  protected: { body: { success: true, data: "{{sandbox}}" } },
  refusal: {
    contentType: "application/json",
    body: { message: "{{message}}" },
    message: "{{status_text}}",
    wwwAuthenticate: "omit",
    groups: { protected: { message: "Token Signature could not be verified.", wwwAuthenticate: "jwt-auth" } },
  },
  codes: {
    credentials_missing: tymon("Token not provided"),
    authorization_not_bearer: tymon("Token not provided"),
    bearer_token_empty: tymon("Token not provided"),
    token_malformed: tymon("Wrong number of segments"),
    token_signature_invalid: tymon("Token Signature could not be verified."),
    token_expired: tymon("Token has expired"),
    token_revoked: tymon("The token has been blacklisted"),
    token_unknown_merchant: tymon("User not found"),
    merchant_disabled: tymon("User not found"),
    api_key_missing: required("api_key"),
    api_secret_missing: required("api_secret"),
    login_username_missing: required("username"),
    login_password_missing: required("password"),
    unknown_api_key: { status: 401, body: { error: "Unauthorized" } },
    wrong_api_secret: { status: 401, body: { error: "Unauthorized" } },
    credentials_rejected: { status: 401, body: { error: "Unauthorized" } },
    login_invalid_credentials: { status: 401, body: { error: "Unauthorized" } },
    method_not_allowed: { message: "The {{method}} method is not supported for route {{route}}. Supported methods: POST." },
    not_found: { message: "The route {{route}} could not be found." },
  },
  // lcobucci/jwt's header (typ JWT, no kid) and tymon's sub and prv; leeway 0 (config/config.php).
  // prv is sha1 of App\Models\User (tymon lock_subject: sha1(get_class($model)), the default user model).
  jwt: { typ: "JWT", kid: false, claims: { prv: "23bd5c8949f600adb39e701c400872db7a5976f7" }, leeway: 0 },
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

export const BUILT_IN_PROFILES: Readonly<Record<string, ProfileFile>> = {
  oauth: OAUTH,
  lexik: LEXIK,
  spring: SPRING,
  laravel: LARAVEL,
  camel: CAMEL,
  envelope: ENVELOPE,
};
export const BUILT_IN_NAMES = Object.keys(BUILT_IN_PROFILES);
