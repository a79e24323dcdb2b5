import { createHash, randomBytes, randomUUID } from "node:crypto";
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
} from "./framework-kit.js";
import { parseJws, signJws, verifiedWith } from "./jws.js";
import type { RunningProvider } from "./kit.js";
import { LARAVEL_EXCEPTION_JSON, LARAVEL_JSON, phpJsonEncode } from "./php-json.js";

/**
 * A Laravel 11+ app whose API is guarded by tymon/jwt-auth 2.1's `jwt.auth` middleware, copied
 * from the sources RESEARCH-24 §0 and §3 read:
 * - tymondesigns/jwt-auth 2.1.1 @51620eb: Http/Middleware/BaseMiddleware.php (UnauthorizedHttpException
 *   ('jwt-auth', …): `WWW-Authenticate: jwt-auth`; "Token not provided", "User not found", or the
 *   JWTException's text), Http/Parser/AuthHeaders.php (the last "bearer" in the header, any case,
 *   cut at the first comma, trimmed; then the `token` query and input), Validators/TokenValidator.php
 *   ("Wrong number of segments", "Malformed token"), Providers/JWT/Lcobucci.php ("Could not decode
 *   token: …", "Token Signature could not be verified.": the signature is checked BEFORE expiry),
 *   Validators/PayloadValidator.php and Claims/* (required claims, then each claim in payload order:
 *   "Issued At (iat) timestamp cannot be in the future", "Token has expired", "Not Before (nbf)
 *   timestamp cannot be in the future"), Support/Utils.php (expired once now passes exp: leeway 0),
 *   src/Factory.php + Claims/Factory.php (claims iss = the request URL, iat, exp, nbf, jti = 16
 *   random characters, then sub and prv = sha1 of the user class), config/config.php (HS256, ttl 60
 *   minutes, leeway 0, lock_subject), docs/quick-start.md (the login: `{"error":"Unauthorized"}`,
 *   `{"access_token","token_type":"bearer","expires_in":ttl*60}`).
 * - lcobucci/jwt 4.3.0 @4d7de2f: src/Token/Builder.php (header `{"typ":"JWT","alg":"HS256"}`),
 *   src/Encoding/JoseEncoder.php (slashes unescaped inside the token).
 * - laravel/framework 13.x @bd71b45 (the same lines in 9.x to 12.x): Foundation/Exceptions/Handler.php
 *   (HttpExceptions as `{"message"}` pretty-printed with JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES,
 *   with the exception's headers; validation as compact `{"message","errors"}` 422, the message the
 *   first error plus " (and N more error(s))"), Http/JsonResponse.php (options 0: `\/`),
 *   Translation/lang/en/validation.php ("The :attribute field is required."),
 *   Routing/AbstractRouteCollection.php (405 "The GET method is not supported for route … Supported
 *   methods: POST." with `Allow`), symfony ResponseHeaderBag (`Cache-Control: no-cache, private`).
 *
 * How this app maps the merchant API onto it (the app's code, not the frameworks'):
 * - Exceptions render as JSON for `api/*` (`$exceptions->shouldRenderJsonWhen(fn ($r) => $r->is('api/*'))`,
 *   Laravel's documented switch), so a client without `Accept: application/json` gets the same bytes.
 * - POST /api/v2/auth/token: the app's controller merges X-Api-Key/X-Api-Secret into the input,
 *   validates `api_key` and `api_secret` as required, answers wrong ones and success as tymon's
 *   quick-start login does, the token made by `auth('api')->login($merchant)`.
 * - /api/v2/payment/* and /api/v2/cashout/*: `jwt.auth`; the controller answers
 *   `{"success":true,"data":{…},"request_id":…}`.
 * - POST /api/v2/payment/init: the app's `payment.token` middleware, `abort(401, 'Invalid payment
 *   token.')` (an HttpException: pretty-printed, no challenge); success 201 in the same envelope.
 * - POST /api/login_check: tymon's quick-start login with `username` as the e-mail.
 * - The app's AssignRequestId middleware (global) puts `X-Request-Id: <Str::uuid()>` on every answer,
 *   a new one per request, and the app's envelope repeats it as `request_id`.
 * - The merchant model is App\Models\Merchant with key 1.
 */
export const LARAVEL_CREDENTIALS = {
  apiKey: "laravel-key-4a9c21",
  apiSecret: "laravel-secret-0e7b5d2f8c61",
  paymentToken: "laravel-pay-5f1a8c3e9d27",
  email: "shop@laravel-provider.test",
  password: "laravel-password-7a3e0b",
  merchantId: "1",
};

/**
 * What each drift changes (one answer each): renamed-field: the protected answer's `data` becomes
 * `result`; removed-field: the token answer loses `token_type`; added-field: it gains
 * `refresh_expires_in`; status: the validation error answers 400; message: "Token has expired"
 * becomes "Token expired"; challenge: the no-token refusal's `WWW-Authenticate` becomes `Bearer`;
 * content-type: the wrong-secret refusal is application/vnd.api+json; body-empty: the wrong
 * password is `response()->noContent(401)`; header-appeared: the token answer gains
 * `X-RateLimit-Limit: 60`; header-disappeared: the wrong-secret refusal loses X-Request-Id.
 * (No `code` and no `body-nonempty`: Laravel sends no error codes and no empty answers.)
 */
export const LARAVEL_DRIFTS = DRIFTS.filter((d) => d !== "code" && d !== "body-nonempty");

const TTL_MINUTES = 60;
const LEEWAY = 0;
const REQUIRED_CLAIMS = ["iss", "iat", "exp", "nbf", "sub", "jti"];
const PRV = createHash("sha1").update("App\\Models\\Merchant").digest("hex");
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function startLaravelProvider(options?: FrameworkOptions): Promise<RunningProvider> {
  return startFrameworkProvider(laravelApp, LARAVEL_CREDENTIALS, options, "https://api.laravel-provider.test");
}

/** Str::random(16): letters and digits. */
function strRandom(length: number): string {
  return [...randomBytes(length)].map((b) => ALNUM[b % ALNUM.length]).join("");
}

async function laravelApp({ clock, credentials, issued, drift }: AppContext): Promise<FrameworkApp> {
  const key = { alg: "HS256" as const, secret: randomBytes(32) };

  /** Every answer passes the app's AssignRequestId middleware last. */
  const answer = (status: number, headers: Record<string, string>, body: string | undefined, requestId: string | undefined): RawAnswer => ({
    status,
    headers: { "Cache-Control": "no-cache, private", ...headers, ...(requestId !== undefined && { "X-Request-Id": requestId }) },
    ...(body !== undefined && { body }),
  });
  const json = (status: number, data: unknown, requestId: string): RawAnswer =>
    answer(status, { "Content-Type": "application/json" }, phpJsonEncode(data, LARAVEL_JSON), requestId);
  /** An HttpException through Handler::prepareJsonResponse. */
  const httpException = (status: number, message: string, requestId: string, headers: Record<string, string> = {}): RawAnswer =>
    answer(status, { ...headers, "Content-Type": "application/json" }, phpJsonEncode({ message }, LARAVEL_EXCEPTION_JSON), requestId);
  const unauthorized = (message: string, requestId: string) => {
    const challenge = drift === "challenge" && message === "Token not provided" ? "Bearer" : "jwt-auth";
    return httpException(401, message, requestId, { "WWW-Authenticate": challenge });
  };

  const sign = (iat: number, url: string) => {
    const claims = { iss: url, iat, exp: iat + TTL_MINUTES * 60, nbf: iat, jti: strRandom(16), sub: credentials.merchantId, prv: PRV };
    const jwt = signJws('{"typ":"JWT","alg":"HS256"}', JSON.stringify(claims), key);
    issued.push(jwt);
    return jwt;
  };
  /** tymon's quick-start respondWithToken. */
  const respondWithToken = (jwt: string, requestId: string, route: "token" | "login"): RawAnswer => {
    const ttl = TTL_MINUTES * 60;
    // Drifts change the token route's answer only, so --check has one answer to name.
    const changed = route === "token" ? drift : undefined;
    const body =
      changed === "removed-field"
        ? { access_token: jwt, expires_in: ttl }
        : changed === "added-field"
          ? { access_token: jwt, token_type: "bearer", expires_in: ttl, refresh_expires_in: 20160 * 60 }
          : { access_token: jwt, token_type: "bearer", expires_in: ttl };
    const a = json(200, body, requestId);
    if (changed === "header-appeared") a.headers["X-RateLimit-Limit"] = "60";
    return a;
  };

  /** `$request->validate([...=> 'required'])` on the input (JSON body, then the merged headers). */
  const validate = (input: Record<string, unknown>, fields: string[], requestId: string): RawAnswer | undefined => {
    const errors: Record<string, string[]> = {};
    for (const f of fields) {
      const v = input[f];
      if (v === undefined || v === null || (typeof v === "string" && v.trim() === "")) errors[f] = [`The ${f.replace(/_/g, " ")} field is required.`];
    }
    const names = Object.keys(errors);
    if (names.length === 0) return undefined;
    const more = names.length - 1;
    const message = errors[names[0]!]![0]! + (more > 0 ? ` (and ${more} more ${more === 1 ? "error" : "errors"})` : "");
    // The status drift: only the answer to a missing api_secret alone.
    return json(drift === "status" && names.length === 1 && names[0] === "api_secret" ? 400 : 422, { message, errors }, requestId);
  };

  const input = (req: FrameworkRequest): Record<string, unknown> => {
    const data = parseJsonObject(req.body);
    return typeof data === "object" ? data : {};
  };

  const token = (req: FrameworkRequest, requestId: string): RawAnswer => {
    const data = input(req);
    const merged = { api_key: data.api_key ?? req.headers["x-api-key"], api_secret: data.api_secret ?? req.headers["x-api-secret"] };
    const invalid = validate(merged, ["api_key", "api_secret"], requestId);
    if (invalid) return invalid;
    if (merged.api_key !== credentials.apiKey || merged.api_secret !== credentials.apiSecret) {
      const refused = json(401, { error: "Unauthorized" }, requestId);
      if (drift === "content-type") refused.headers["Content-Type"] = "application/vnd.api+json";
      if (drift === "header-disappeared") delete refused.headers["X-Request-Id"];
      return refused;
    }
    return respondWithToken(sign(clock.nowSeconds(), req.url), requestId, "token");
  };

  const login = (req: FrameworkRequest, requestId: string): RawAnswer => {
    const data = input(req);
    if (data.username !== credentials.email || data.password !== credentials.password) {
      if (drift === "body-empty") return answer(401, {}, undefined, requestId);
      return json(401, { error: "Unauthorized" }, requestId);
    }
    return respondWithToken(sign(clock.nowSeconds(), req.url), requestId, "login");
  };

  /** Request::bearerToken(): after the last "Bearer ", up to a comma. */
  const bearerToken = (req: FrameworkRequest): string | undefined => {
    const header = req.headers.authorization ?? "";
    const at = header.toLowerCase().lastIndexOf("bearer ");
    if (at < 0) return undefined;
    const rest = header.slice(at + 7);
    return rest.includes(",") ? rest.slice(0, rest.indexOf(",")) : rest;
  };

  const paymentInit = (req: FrameworkRequest, requestId: string): RawAnswer => {
    if (bearerToken(req) !== credentials.paymentToken) return httpException(401, "Invalid payment token.", requestId);
    const id = paymentId();
    return json(
      201,
      { success: true, data: { payment_id: id, checkout_url: `https://pay.laravel-provider.test/checkout/${id}` }, request_id: requestId },
      requestId,
    );
  };

  /** tymon's parser chain: the Authorization header, then the `token` query and input. */
  const parseToken = (req: FrameworkRequest): string | undefined => {
    const header = req.headers.authorization;
    if (header !== undefined) {
      const at = header.toLowerCase().lastIndexOf("bearer");
      if (at >= 0) {
        const rest = header.slice(at + "bearer".length);
        const token = (rest.includes(",") ? rest.slice(0, rest.indexOf(",")) : rest).trim();
        if (token !== "") return token;
      }
    }
    const fromQuery = req.query.get("token");
    if (fromQuery) return fromQuery;
    const fromInput = input(req).token;
    return typeof fromInput === "string" && fromInput !== "" ? fromInput : undefined;
  };

  /** The `jwt.auth` middleware: the refusal's message, or undefined when the token is good. */
  const jwtAuth = (req: FrameworkRequest): string | undefined => {
    const token = parseToken(req);
    if (token === undefined) return "Token not provided";
    const parts = token.split(".");
    if (parts.length !== 3) return "Wrong number of segments";
    if (parts.some((p) => p.trim() === "") || parts.map((p) => p.trim()).join(".") !== token) return "Malformed token";
    const jws = parseJws(token);
    if (typeof jws === "string") return "Could not decode token: Error while decoding from JSON";
    if (!verifiedWith(jws, key)) return "Token Signature could not be verified.";
    const payload = jws.payload;
    if (!REQUIRED_CLAIMS.every((c) => c in payload)) return "JWT payload does not contain the required claims";
    const now = clock.nowMs() / 1000;
    for (const claim of Object.keys(payload)) {
      const v = Number(payload[claim]);
      if (claim === "iat" && v - LEEWAY > now) return "Issued At (iat) timestamp cannot be in the future";
      if (claim === "exp" && v + LEEWAY < now) return drift === "message" ? "Token expired" : "Token has expired";
      if (claim === "nbf" && v - LEEWAY > now) return "Not Before (nbf) timestamp cannot be in the future";
    }
    if (String(payload.sub) !== credentials.merchantId) return "User not found";
    return undefined;
  };

  const ROUTES: Array<{ path: string; method: string; run: (req: FrameworkRequest, requestId: string) => RawAnswer }> = [
    { path: "/api/v2/auth/token", method: "POST", run: token },
    { path: "/api/login_check", method: "POST", run: login },
    { path: "/api/v2/payment/init", method: "POST", run: paymentInit },
    ...["payment", "cashout"].map((group) => ({
      path: `/api/v2/${group}/status`,
      method: "GET",
      run: (req: FrameworkRequest, requestId: string) => {
        const refused = jwtAuth(req);
        if (refused) return unauthorized(refused, requestId);
        const data = { merchant_id: Number(credentials.merchantId), operation: `${group}.status` };
        return json(200, { success: true, [drift === "renamed-field" ? "result" : "data"]: data, request_id: requestId }, requestId);
      },
    })),
  ];

  return {
    expiredToken: () => sign(clock.nowSeconds() - TTL_MINUTES * 60 - LEEWAY - 60, "https://api.laravel-provider.test/api/v2/auth/token"),
    handle(req) {
      const requestId = randomUUID();
      const routePath = req.path.replace(/^\//, "");
      const matches = ROUTES.filter((r) => r.path === req.path);
      if (matches.length === 0) return httpException(404, `The route ${routePath} could not be found.`, requestId);
      const route = matches.find((r) => r.method === req.method);
      if (!route) {
        const methods = matches.map((r) => r.method).join(", ");
        return httpException(405, `The ${req.method} method is not supported for route ${routePath}. Supported methods: ${methods}.`, requestId, {
          Allow: methods,
        });
      }
      return route.run(req, requestId);
    },
  };
}
