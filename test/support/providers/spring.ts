import { randomUUID } from "node:crypto";
import {
  type AppContext,
  DRIFTS,
  type FrameworkApp,
  type FrameworkOptions,
  type FrameworkRequest,
  parseJsonObject,
  paymentId,
  type RawAnswer,
  startFrameworkProvider,
  tokenCredentials,
} from "./framework-kit.js";
import { parseJws, rsaKey, signJws, verifiedWith } from "./jws.js";
import type { RunningProvider } from "./kit.js";

/**
 * A Spring Boot 3.5 app that is a Spring Security 6.5 OAuth2 resource server for its own RS256
 * JWTs, copied from the sources RESEARCH-24 §2 read:
 * - spring-projects/spring-security 6.5.11 @73b0777, oauth2-resource-server:
 *   web/BearerTokenAuthenticationEntryPoint.java (401/400 with an EMPTY body; the challenge is
 *   `Bearer` then `error`, `error_description`, `error_uri` as `key="value"` joined by ", "; a bare
 *   `Bearer` when nothing is wrong with a token because there is none), web/DefaultBearerTokenResolver.java
 *   (only headers starting with "bearer" in any case; then `^Bearer (?<token>[a-zA-Z0-9-._~+/]+=*)$`
 *   or "Bearer token is malformed"), BearerTokenErrors.java, BearerTokenError.java (DEFAULT_URI),
 *   authentication/JwtAuthenticationProvider.java; oauth2-jose: NimbusJwtDecoder.java ("An error
 *   occurred while attempting to decode the Jwt: %s", "Malformed token", the signature checked by
 *   Nimbus BEFORE Spring's validators), JwtTimestampValidator.java (60 s of clock skew; expired when
 *   now - 60 s is after exp: "Jwt expired at <Instant.toString()>"); web/header/writers/* (the
 *   default security headers on every answer).
 * - spring-projects/spring-boot v3.5.16 @0566f69: BasicErrorController.java and
 *   DefaultErrorAttributes.java (`{"timestamp","status","error","path"}` in that order, message left
 *   out by default), JacksonAutoConfiguration.java + Jackson's StdDateFormat (timestamp
 *   `yyyy-MM-dd'T'HH:mm:ss.SSS+00:00`).
 * - Not read in source (RESEARCH-24 says so): Nimbus's texts "Signed JWT rejected: Invalid signature"
 *   and "Signed JWT rejected: Another algorithm expected, or no matching key(s) found", Tomcat's
 *   headers on an empty answer.
 *
 * How this app maps the merchant API onto it (the app's code, not the framework's):
 * - POST /api/v2/auth/token (permitted) is the app's controller: credentials from the JSON body or
 *   the X-Api-Key/X-Api-Secret headers; a missing one `ResponseStatusException(BAD_REQUEST)`, wrong
 *   ones `ResponseStatusException(UNAUTHORIZED)`, a body that is not JSON Spring MVC's
 *   HttpMessageNotReadableException: each Boot's error body (the app permits /error, as Boot's docs
 *   advise). Success: `{"access_token","token_type":"Bearer","expires_in"}` (RFC 6749 §5.1 names),
 *   the token made by NimbusJwtEncoder as spring-security-samples' jwt/login TokenController makes it
 *   (header `{"alg":"RS256"}`: the key has no kid; claims iss "self", sub, exp, iat, scope). The
 *   claims' order is Nimbus's builder's, from memory, not in RESEARCH-24.
 * - /api/v2/payment/* and /api/v2/cashout/*: `oauth2ResourceServer().jwt()` with
 *   NimbusJwtDecoder.withPublicKey (one key: no kid matching).
 * - POST /api/v2/payment/init: a second filter chain with `opaqueToken()` and the app's introspector
 *   for payment tokens, which refuses an unknown one as Spring's own SpringOpaqueTokenIntrospector
 *   refuses an inactive token: "Provided token isn't active" (Spring's text, not in RESEARCH-24).
 * - POST /api/login_check: the app's controller calling the AuthenticationManager; its
 *   BadCredentialsException reaches ExceptionTranslationFilter, so a wrong password is the entry
 *   point's empty 401 with a bare `Bearer`.
 * Spring adds no request id: this app sends none.
 */
export const SPRING_CREDENTIALS = {
  apiKey: "spring-key-2c71e0",
  apiSecret: "spring-secret-6d0f3a9b4e12",
  paymentToken: "spring-pay-8e2d4b1c7a90",
  email: "shop@spring-provider.test",
  password: "spring-password-1f9c3d",
  merchantId: "merchant-7731",
};

/**
 * What each drift changes (one answer each): renamed-field: the token answer's `expires_in` becomes
 * `expiresIn`; removed-field: the wrong-secret error body loses `path`; added-field: it gains
 * `message` (server.error.include-message=always); status: the refused payment token answers 403;
 * code: the expired token's challenge says error="invalid_request"; message: its description says
 * "Token expired at …"; challenge: the no-token challenge gains Spring Security 7's
 * `resource_metadata`; content-type: the wrong-secret error body is application/problem+json;
 * body-empty: the wrong-secret refusal has no body; body-nonempty: the expired refusal gets a JSON
 * body; header-appeared: the protected answer gains a per-request X-Request-Id; header-disappeared:
 * the token answer loses X-Frame-Options.
 */
export const SPRING_DRIFTS = DRIFTS;

const TTL = 3600;
const CLOCK_SKEW = 60;
const ERROR_URI = "https://tools.ietf.org/html/rfc6750#section-3.1";
const DECODE = "An error occurred while attempting to decode the Jwt: ";
const REASON: Record<number, string> = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed" };
/** HeadersConfigurer's default writers, in their order. */
const SECURITY_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "X-XSS-Protection": "0",
  "Cache-Control": "no-cache, no-store, max-age=0, must-revalidate",
  Pragma: "no-cache",
  Expires: "0",
  "X-Frame-Options": "DENY",
};

export function startSpringProvider(options?: FrameworkOptions): Promise<RunningProvider> {
  return startFrameworkProvider(springApp, SPRING_CREDENTIALS, options, "https://api.spring-provider.test");
}

/** Instant.toString() of a whole second: no fraction. */
function instant(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
}

async function springApp({ clock, credentials, issued, drift }: AppContext): Promise<FrameworkApp> {
  const key = await rsaKey();

  const json = (status: number, data: unknown, contentType = "application/json"): RawAnswer => ({
    status,
    headers: { ...SECURITY_HEADERS, "Content-Type": contentType },
    body: JSON.stringify(data),
  });
  /** Boot's BasicErrorController body with the default ErrorAttributeOptions. */
  const bootError = (status: number, path: string, headers: Record<string, string> = {}): RawAnswer => {
    const timestamp = new Date(clock.nowMs()).toISOString().replace("Z", "+00:00");
    const answer = json(status, { timestamp, status, error: REASON[status], path });
    Object.assign(answer.headers, headers);
    return answer;
  };
  /** BearerTokenAuthenticationEntryPoint: no body, everything in the challenge. */
  const challenge = (status: number, error?: string, description?: string): RawAnswer => {
    const params = error ? `error="${error}", error_description="${description}", error_uri="${ERROR_URI}"` : "";
    return { status, headers: { ...SECURITY_HEADERS, "WWW-Authenticate": params ? `Bearer ${params}` : "Bearer" } };
  };
  const invalidToken = (description: string) => challenge(401, "invalid_token", description);

  const sign = (iat: number) => {
    const claims = { iss: "self", sub: credentials.merchantId, exp: iat + TTL, iat, scope: "payment cashout" };
    const jwt = signJws('{"alg":"RS256"}', JSON.stringify(claims), key);
    issued.push(jwt);
    return jwt;
  };
  const tokenAnswer = (jwt: string, route: "token" | "login"): RawAnswer => {
    // Drifts change the token route's answer only, so --check has one answer to name.
    const changed = route === "token" ? drift : undefined;
    const answer = json(
      200,
      changed === "renamed-field"
        ? { access_token: jwt, token_type: "Bearer", expiresIn: TTL }
        : { access_token: jwt, token_type: "Bearer", expires_in: TTL },
    );
    if (changed === "header-disappeared") delete (answer.headers as Record<string, string>)["X-Frame-Options"];
    return answer;
  };

  /** DefaultBearerTokenResolver: undefined = no token; "malformed" = starts with bearer but fails the pattern. */
  const resolve = (req: FrameworkRequest): string | undefined | "malformed" => {
    const authorization = req.headers.authorization;
    if (authorization === undefined || !authorization.toLowerCase().startsWith("bearer")) return undefined;
    const m = /^Bearer (?<token>[a-zA-Z0-9-._~+/]+=*)$/i.exec(authorization);
    return m ? m.groups!.token! : "malformed";
  };

  const token = (req: FrameworkRequest): RawAnswer => {
    const data = parseJsonObject(req.body);
    if (data === "invalid") return bootError(400, req.path);
    const { key: apiKey, secret } = tokenCredentials(req, data);
    if (typeof apiKey !== "string" || apiKey === "" || typeof secret !== "string" || secret === "") return bootError(400, req.path);
    if (apiKey !== credentials.apiKey || secret !== credentials.apiSecret) {
      if (drift === "body-empty") return { status: 401, headers: { ...SECURITY_HEADERS } };
      if (drift === "removed-field" || drift === "added-field" || drift === "content-type") {
        const timestamp = new Date(clock.nowMs()).toISOString().replace("Z", "+00:00");
        if (drift === "removed-field") return json(401, { timestamp, status: 401, error: "Unauthorized" });
        if (drift === "added-field")
          return json(401, { timestamp, status: 401, error: "Unauthorized", message: "No message available", path: req.path });
        return json(401, { timestamp, status: 401, error: "Unauthorized", path: req.path }, "application/problem+json");
      }
      return bootError(401, req.path);
    }
    return tokenAnswer(sign(clock.nowSeconds()), "token");
  };

  const login = (req: FrameworkRequest): RawAnswer => {
    const data = parseJsonObject(req.body);
    if (data === "invalid" || data === undefined) return bootError(400, req.path);
    if (data.username !== credentials.email || data.password !== credentials.password) return challenge(401);
    return tokenAnswer(sign(clock.nowSeconds()), "login");
  };

  const paymentInit = (req: FrameworkRequest): RawAnswer => {
    const bearer = resolve(req);
    if (bearer === undefined) return challenge(401);
    if (bearer === "malformed") return invalidToken("Bearer token is malformed");
    if (bearer !== credentials.paymentToken) return challenge(drift === "status" ? 403 : 401, "invalid_token", "Provided token isn't active");
    const id = paymentId();
    return json(201, { paymentId: id, checkoutUrl: `https://pay.spring-provider.test/checkout/${id}` });
  };

  /** The JWT filter chain: the refusal, or undefined when the token is good. */
  const authenticate = (req: FrameworkRequest): RawAnswer | undefined => {
    const bearer = resolve(req);
    if (bearer === undefined) {
      const answer = challenge(401);
      if (drift === "challenge")
        answer.headers["WWW-Authenticate"] = `Bearer resource_metadata="${new URL(req.url).origin}/.well-known/oauth-protected-resource"`;
      return answer;
    }
    if (bearer === "malformed") return invalidToken("Bearer token is malformed");
    const jws = parseJws(bearer);
    if (typeof jws === "string") return invalidToken(`${DECODE}Malformed token`);
    if (jws.header.alg === "none") return invalidToken("Unsupported algorithm of none");
    if (jws.header.alg !== "RS256") return invalidToken(`${DECODE}Signed JWT rejected: Another algorithm expected, or no matching key(s) found`);
    if (!verifiedWith(jws, key)) return invalidToken(`${DECODE}Signed JWT rejected: Invalid signature`);
    const { exp, nbf } = jws.payload;
    const now = clock.nowMs() / 1000;
    if (typeof exp === "number" && now - CLOCK_SKEW > exp) {
      if (drift === "code") return challenge(401, "invalid_request", `${DECODE}Jwt expired at ${instant(exp)}`);
      if (drift === "message") return invalidToken(`${DECODE}Token expired at ${instant(exp)}`);
      if (drift === "body-nonempty") {
        const answer = invalidToken(`${DECODE}Jwt expired at ${instant(exp)}`);
        answer.headers["Content-Type"] = "application/json";
        answer.body = '{"error":"invalid_token"}';
        return answer;
      }
      return invalidToken(`${DECODE}Jwt expired at ${instant(exp)}`);
    }
    if (typeof nbf === "number" && now + CLOCK_SKEW < nbf) return invalidToken(`${DECODE}Jwt used before ${instant(nbf)}`);
    return undefined;
  };

  return {
    expiredToken: () => sign(clock.nowSeconds() - TTL - CLOCK_SKEW - 60),
    handle(req) {
      // Permitted: the token route and the login (and /error). Everything else authenticates first.
      if (req.path === "/api/v2/auth/token" || req.path === "/api/login_check") {
        if (req.method !== "POST") return bootError(405, req.path, { Allow: "POST" });
        return req.path === "/api/login_check" ? login(req) : token(req);
      }
      if (req.path === "/api/v2/payment/init") {
        if (req.method !== "POST") {
          const refused = authenticate(req);
          return refused ?? bootError(405, req.path, { Allow: "POST" });
        }
        return paymentInit(req);
      }
      const refused = authenticate(req);
      if (refused) return refused;
      const operation = /^\/api\/v2\/(payment|cashout)\/status$/.exec(req.path)?.[1];
      if (!operation) return bootError(404, req.path);
      if (req.method !== "GET") return bootError(405, req.path, { Allow: "GET" });
      const answer = json(200, { merchantId: credentials.merchantId, operation: `${operation}.status` });
      if (drift === "header-appeared") answer.headers["X-Request-Id"] = randomUUID();
      return answer;
    },
  };
}
