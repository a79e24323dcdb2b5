import { randomBytes, randomUUID } from "node:crypto";
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
import { phpJsonEncode, SYMFONY_JSON } from "./php-json.js";

/**
 * A Symfony 7.2 app secured by LexikJWTAuthenticationBundle 3.x in its documented default setup,
 * copied from the sources RESEARCH-24 §0 and §1 read:
 * - lexik/LexikJWTAuthenticationBundle 3.x @0f384f0: Security/Authenticator/JWTAuthenticator.php
 *   (start: "JWT Token not found"; authenticate: "Invalid JWT Token", ExpiredTokenException,
 *   InvalidPayloadException), Encoder/LcobucciJWTEncoder.php (checks in this order: invalid, then
 *   EXPIRED, then the signature: an expired token with a bad signature is "Expired JWT Token"),
 *   Signature/LoadedJWS.php (expired when clock_skew <= now - exp; iat beyond the skew is invalid),
 *   Response/JWTAuthenticationFailureResponse.php + JWTCompatAuthenticationFailureResponse.php
 *   (`{"code":<status>,"message"}`, `WWW-Authenticate: Bearer`), Response/JWTAuthenticationSuccessResponse.php
 *   (`{"token"}`), TokenExtractor/AuthorizationHeaderTokenExtractor.php (exactly two space-separated
 *   parts, the first `Bearer` in any case, else "not found"), Services/JWTManager.php and
 *   Services/JWSProvider/LcobucciJWSProvider.php (claims iat, exp, roles, username in that order),
 *   DependencyInjection/Configuration.php (RS256, token_ttl 3600, clock_skew 0, user_id_claim username).
 * - lcobucci/jwt 5.4.0 @8d060ff: src/Token/Builder.php (header `{"typ":"JWT","alg":"RS256"}`, no kid),
 *   src/Encoding/JoseEncoder.php (JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE).
 * - symfony/symfony 7.2 @5feb749: HttpFoundation/JsonResponse.php (flags 15: `\/`, `\u0022`),
 *   ResponseHeaderBag.php (`Cache-Control: no-cache, private`), Security/Http/Authenticator/JsonLoginAuthenticator.php
 *   (json_login: only JSON requests; "Invalid JSON." and missing keys are BadRequestHttpException),
 *   Security/Core/Exception/BadCredentialsException.php ("Invalid credentials."),
 *   ErrorHandler/ErrorRenderer/SerializerErrorRenderer.php + Serializer/Normalizer/ProblemNormalizer.php
 *   (prod, APP_DEBUG=0: `{"type","title","status","detail":<status text>}`, `Vary: Accept`),
 *   HttpKernel/EventListener/RouterListener.php (routing runs before the firewall: 404/405 first).
 *
 * How this app maps the merchant API onto it (the parts that are the app's, not the bundle's):
 * - POST /api/v2/auth/token is the app's controller using Lexik's JWTManager: api_key/api_secret
 *   from the JSON body or the X-Api-Key/X-Api-Secret headers; a body that is not JSON or a missing
 *   key is a BadRequestHttpException (as json_login does), wrong credentials
 *   `new JWTAuthenticationFailureResponse('Invalid credentials.')`, success
 *   `new JWTAuthenticationSuccessResponse($jwtManager->create($merchant))`.
 * - /api/v2/payment/* and /api/v2/cashout/*: the `^/api` firewall with `jwt: ~`.
 * - POST /api/v2/payment/init: its own firewall with the app's PaymentTokenAuthenticator, whose
 *   failure is `new JWTAuthenticationFailureResponse('Invalid payment token.')`; success 201.
 * - /api/login_check: the bundle's documented json_login with Lexik's success and failure handlers.
 * - The merchant user's identifier (the `username` claim) is its login e-mail, its roles
 *   ["ROLE_USER"] (what Symfony's maker User::getRoles() always adds).
 * Symfony adds no request id: this app sends none.
 */
export const LEXIK_CREDENTIALS = {
  apiKey: "lexik-key-7d1f40",
  apiSecret: "lexik-secret-9b2e4c7a1f03",
  paymentToken: "lexik-pay-3c8e1a9d6b55",
  email: "shop@lexik-provider.test",
  password: "lexik-password-5e2f81",
  merchantId: "shop-42",
};

/**
 * What each drift changes (one answer each, so `--check` has one thing to say):
 * renamed-field: the token answer's `token` becomes `jwt`; removed-field: the expired refusal loses
 * `code`; added-field: the token answer gains gesdinet's `refresh_token`; status: the refused payment
 * token answers 403; code: the wrong-secret refusal's `code` member says 4011 (an app's own code);
 * message: "Expired JWT Token" becomes "JWT Token expired"; challenge: the no-token refusal's
 * `WWW-Authenticate` becomes `Bearer realm="merchant-api"`; content-type: the wrong-secret refusal
 * becomes application/problem+json; body-empty: the no-token refusal loses its body (a custom entry
 * point); header-appeared: the token answer gains a per-request X-Request-Id; header-disappeared:
 * the token answer loses Cache-Control. (body-nonempty has no Lexik form: none of its answers is empty.)
 */
export const LEXIK_DRIFTS = DRIFTS.filter((d) => d !== "body-nonempty");

const TTL = 3600;
const CLOCK_SKEW = 0;
const PROBLEM_TYPE = "https://tools.ietf.org/html/rfc2616#section-10";
const STATUS_TEXT: Record<number, string> = { 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed" };

export function startLexikProvider(options?: FrameworkOptions): Promise<RunningProvider> {
  return startFrameworkProvider(lexikApp, LEXIK_CREDENTIALS, options, "https://api.lexik-provider.test");
}

async function lexikApp({ clock, credentials, issued, drift }: AppContext): Promise<FrameworkApp> {
  const key = await rsaKey();

  const json = (status: number, data: unknown, headers: Record<string, string> = {}): RawAnswer => ({
    status,
    headers: { ...headers, "Cache-Control": "no-cache, private", "Content-Type": "application/json" },
    body: phpJsonEncode(data, SYMFONY_JSON),
  });
  /** JWTAuthenticationFailureResponse: code first, then message; WWW-Authenticate: Bearer. */
  const failure = (message: string, status = 401): RawAnswer => json(status, { code: status, message }, { "WWW-Authenticate": "Bearer" });
  /** An HttpException rendered by the Serializer's ProblemNormalizer in prod (encoder options 0). */
  const problem = (status: number, headers: Record<string, string> = {}): RawAnswer => ({
    status,
    headers: { ...headers, "Cache-Control": "no-cache, private", Vary: "Accept", "Content-Type": "application/json" },
    body: phpJsonEncode({ type: PROBLEM_TYPE, title: "An error occurred", status, detail: STATUS_TEXT[status] }, {}),
  });

  const sign = (iat: number) => {
    const payload = { iat, exp: iat + TTL, roles: ["ROLE_USER"], username: credentials.email };
    const jwt = signJws('{"typ":"JWT","alg":"RS256"}', JSON.stringify(payload), key);
    issued.push(jwt);
    return jwt;
  };
  const success = (jwt: string): RawAnswer => {
    const answer = json(
      200,
      drift === "renamed-field" ? { jwt } : drift === "added-field" ? { token: jwt, refresh_token: randomBytes(64).toString("hex") } : { token: jwt },
    );
    if (drift === "header-appeared") answer.headers["X-Request-Id"] = randomUUID();
    if (drift === "header-disappeared") delete answer.headers["Cache-Control"];
    return answer;
  };

  /** AuthorizationHeaderTokenExtractor: exactly `Bearer <x>` (any case), else false (= not found). */
  const extract = (req: FrameworkRequest): string | false => {
    const parts = (req.headers.authorization ?? "").split(" ");
    return parts.length === 2 && parts[0]!.toLowerCase() === "bearer" ? parts[1]! : false;
  };

  const token = (req: FrameworkRequest): RawAnswer => {
    const data = parseJsonObject(req.body);
    if (data === "invalid") return problem(400);
    const { key: apiKey, secret } = tokenCredentials(req, data);
    if (typeof apiKey !== "string" || apiKey === "" || typeof secret !== "string" || secret === "") return problem(400);
    if (apiKey !== credentials.apiKey || secret !== credentials.apiSecret) {
      if (drift === "code") return json(401, { code: 4011, message: "Invalid credentials." }, { "WWW-Authenticate": "Bearer" });
      const refused = failure("Invalid credentials.");
      if (drift === "content-type") refused.headers["Content-Type"] = "application/problem+json";
      return refused;
    }
    return success(sign(clock.nowSeconds()));
  };

  const login = (req: FrameworkRequest): RawAnswer => {
    // json_login supports only JSON requests; the route has no controller, so anything else is a 404.
    if (!/json/i.test(req.headers["content-type"] ?? "")) return problem(404);
    const data = parseJsonObject(req.body);
    if (data === undefined || data === "invalid") return problem(400);
    for (const k of ["username", "password"]) if (typeof data[k] !== "string" || data[k] === "") return problem(400);
    if (data.username !== credentials.email || data.password !== credentials.password) return failure("Invalid credentials.");
    return json(200, { token: sign(clock.nowSeconds()) });
  };

  const paymentInit = (req: FrameworkRequest): RawAnswer => {
    if (extract(req) !== credentials.paymentToken) return failure("Invalid payment token.", drift === "status" ? 403 : 401);
    const id = paymentId();
    return json(201, { id, url: `https://pay.lexik-provider.test/checkout/${id}` });
  };

  /** The `^/api` firewall with `jwt: ~`, then the app's controller. */
  const protectedCall = (req: FrameworkRequest, operation: string): RawAnswer => {
    const bearer = extract(req);
    if (bearer === false) {
      if (drift === "body-empty") return { status: 401, headers: { "Cache-Control": "no-cache, private", "WWW-Authenticate": "Bearer" } };
      const refused = failure("JWT Token not found");
      if (drift === "challenge") refused.headers["WWW-Authenticate"] = 'Bearer realm="merchant-api"';
      return refused;
    }
    const jws = parseJws(bearer);
    if (typeof jws === "string") return failure("Invalid JWT Token");
    const { iat, exp } = jws.payload;
    const now = clock.nowSeconds();
    if (typeof exp !== "number") return failure("Invalid JWT Token");
    if (typeof iat === "number" && iat - CLOCK_SKEW > now) return failure("Invalid JWT Token");
    if (CLOCK_SKEW <= now - exp) {
      if (drift === "message") return failure("JWT Token expired");
      if (drift === "removed-field") return json(401, { message: "Expired JWT Token" }, { "WWW-Authenticate": "Bearer" });
      return failure("Expired JWT Token");
    }
    if (!verifiedWith(jws, key)) return failure("Invalid JWT Token");
    const username = jws.payload.username;
    if (username === undefined) return failure('Unable to find key "username" in the token payload.');
    if (username !== credentials.email) return failure("Invalid credentials.");
    return json(200, { operation, merchant: credentials.merchantId });
  };

  return {
    expiredToken: () => sign(clock.nowSeconds() - TTL - CLOCK_SKEW - 60),
    handle(req) {
      const route = ROUTES.find((r) => r.path === req.path);
      if (!route) return problem(404);
      if (route.methods && !route.methods.includes(req.method)) return problem(405, { Allow: route.methods.join(", ") });
      switch (route.name) {
        case "token":
          return token(req);
        case "login":
          return login(req);
        case "payment_init":
          return paymentInit(req);
        default:
          return protectedCall(req, route.name);
      }
    },
  };
}

/** The app's routes (routing runs before the firewall: an unknown path is 404 even without a token). */
const ROUTES: Array<{ name: string; path: string; methods?: string[] }> = [
  { name: "token", path: "/api/v2/auth/token", methods: ["POST"] },
  { name: "payment_init", path: "/api/v2/payment/init", methods: ["POST"] },
  { name: "payment.status", path: "/api/v2/payment/status", methods: ["GET"] },
  { name: "cashout.status", path: "/api/v2/cashout/status", methods: ["GET"] },
  // Declared as the bundle's documentation does: no methods, no controller.
  { name: "login", path: "/api/login_check" },
];
