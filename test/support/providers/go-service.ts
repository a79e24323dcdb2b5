import { randomBytes, randomUUID } from "node:crypto";
import {
  type AppContext,
  type FrameworkApp,
  type FrameworkOptions,
  type FrameworkRequest,
  parseJsonObject,
  paymentId,
  type RawAnswer,
  startFrameworkProvider,
  tokenCredentials,
} from "./framework-kit.js";
import { parseJws, signJws, type SigningKey, verifiedWith } from "./jws.js";
import type { RunningProvider } from "./kit.js";

/**
 * A Go service on net/http with golang-jwt/jwt v5 for its own HS256 tokens, copied from:
 * - golang/go src/net/http/server.go, func Error (Go 1.22+): the refusal's body is the error's text
 *   and a newline (fmt.Fprintln), `Content-Type: text/plain; charset=utf-8`,
 *   `X-Content-Type-Options: nosniff`; ServeMux's NotFound is Error(w, "404 page not found", 404).
 *   encoding/json's Encoder.Encode writes the value and a newline; a time.Time marshals as
 *   time.RFC3339Nano (trailing zeros trimmed).
 * - golang-jwt/jwt v5.3.1: errors.go (ErrTokenMalformed "token is malformed", ErrTokenSignatureInvalid
 *   "token signature is invalid", ErrTokenExpired "token is expired", ErrTokenInvalidClaims "token has
 *   invalid claims"), parser.go (the wrapped error reads "<kind>: <cause>": "token is malformed:
 *   token contains an invalid number of segments", "token has invalid claims: token is expired"),
 *   hmac.go (ErrSignatureInvalid "signature is invalid"), validator.go (no leeway unless
 *   WithLeeway), token.go (jwt.NewWithClaims: header {"alg":"HS256","typ":"JWT"}).
 * How this service uses them (its code, not the libraries'): `jwt.Parse(token, keyFunc,
 * jwt.WithValidMethods([]string{"HS256"}), jwt.WithLeeway(30*time.Second))` as Go services commonly
 * set a leeway; every refusal is `http.Error(w, err.Error(), code)`; a missing or non-Bearer
 * Authorization is "missing bearer token"; credentials from the JSON body or X-Api-* headers.
 * RegisteredClaims in the order golang-jwt marshals them (iss, sub, aud, exp, nbf, iat, jti).
 */
export const GO_CREDENTIALS = {
  apiKey: "go-key-4e1d",
  apiSecret: "go-secret-9b27c3f0a1",
  paymentToken: "go-pay-51f0c2e8",
  email: "shop@go-provider.test",
  password: "go-password-7a3e",
  merchantId: "m-go-1",
};

/**
 * The kinds of drift this fake shows, one answer each: message: the expired token's text says "token
 * has expired"; renamed-field: the token route's expires_at becomes expiry; header-appeared: the
 * protected answer gains a per-request X-Request-Id (a uuid middleware).
 */
export const GO_DRIFTS = ["message", "renamed-field", "header-appeared"] as const;

const TTL = 900;
const LEEWAY = 30;

export function startGoProvider(options?: FrameworkOptions): Promise<RunningProvider> {
  return startFrameworkProvider(goApp, GO_CREDENTIALS, options);
}

/** time.Time's RFC3339Nano: nine digits of the provider's nanosecond clock, trailing zeros trimmed. */
function rfc3339Nano(ms: number): string {
  const nanos = String((ms % 1000) * 1_000_000 + (randomBytes(3).readUIntBE(0, 3) % 1_000_000)).padStart(9, "0");
  const fraction = nanos.replace(/0+$/, "");
  return `${new Date(ms).toISOString().slice(0, 19)}${fraction === "" ? "" : `.${fraction}`}Z`;
}

export async function goApp({ clock, credentials, issued, drift }: AppContext): Promise<FrameworkApp> {
  const key: SigningKey = { alg: "HS256", secret: randomBytes(32) };

  /** http.Error. */
  const httpError = (text: string, status: number): RawAnswer => ({
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" },
    body: `${text}\n`,
  });
  /** json.NewEncoder(w).Encode(v) after setting the content type. */
  const encode = (status: number, value: unknown): RawAnswer => ({
    status,
    headers: { "Content-Type": "application/json" },
    body: `${JSON.stringify(value)}\n`,
  });

  const sign = (iat: number) => {
    const claims = { sub: credentials.merchantId, exp: iat + TTL, iat };
    const jwt = signJws('{"alg":"HS256","typ":"JWT"}', JSON.stringify(claims), key);
    issued.push(jwt);
    return jwt;
  };
  // Drifts change one answer each (the token route's, the protected call's), so --check has one line to say.
  const tokenAnswer = (jwt: string, exp: number, route: "token" | "login") =>
    encode(200, {
      access_token: jwt,
      token_type: "Bearer",
      [drift === "renamed-field" && route === "token" ? "expiry" : "expires_at"]: rfc3339Nano(exp * 1000),
    });

  /** The middleware: jwt.Parse with the leeway; the refusal, or undefined for a good token. */
  const authenticate = (req: FrameworkRequest): RawAnswer | undefined => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (token === undefined) return httpError("missing bearer token", 401);
    const jws = parseJws(token);
    if (jws === "segments") return httpError("token is malformed: token contains an invalid number of segments", 401);
    if (jws === "json") return httpError("token is malformed: could not JSON decode header", 401);
    if (jws.header.alg !== "HS256")
      return httpError(`token is unverifiable: error while executing keyfunc: unexpected signing method: ${String(jws.header.alg)}`, 401);
    if (!verifiedWith(jws, key)) return httpError("token signature is invalid: signature is invalid", 401);
    const exp = jws.payload.exp;
    if (typeof exp === "number" && clock.nowSeconds() - LEEWAY > exp)
      return httpError(drift === "message" ? "token has invalid claims: token has expired" : "token has invalid claims: token is expired", 401);
    return undefined;
  };

  return {
    expiredToken: () => sign(clock.nowSeconds() - TTL - LEEWAY - 60),
    handle(req) {
      if (req.path === "/api/v2/auth/token" && req.method === "POST") {
        const data = parseJsonObject(req.body);
        if (data === "invalid") return httpError("invalid request body", 400);
        const { key: apiKey, secret } = tokenCredentials(req, data);
        if (typeof apiKey !== "string" || apiKey === "" || typeof secret !== "string" || secret === "")
          return httpError("api_key and api_secret are required", 400);
        if (apiKey !== credentials.apiKey || secret !== credentials.apiSecret) return httpError("invalid credentials", 401);
        const iat = clock.nowSeconds();
        return tokenAnswer(sign(iat), iat + TTL, "token");
      }
      if (req.path === "/api/login_check" && req.method === "POST") {
        const data = parseJsonObject(req.body);
        if (data === "invalid" || data === undefined) return httpError("invalid request body", 400);
        if (data.username !== credentials.email || data.password !== credentials.password) return httpError("invalid credentials", 401);
        const iat = clock.nowSeconds();
        return tokenAnswer(sign(iat), iat + TTL, "login");
      }
      if (req.path === "/api/v2/payment/init" && req.method === "POST") {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
        if (bearer === undefined) return httpError("missing bearer token", 401);
        if (bearer.split(".").length === 3) return httpError("payment token required", 401);
        if (bearer !== credentials.paymentToken) return httpError("unknown payment token", 401);
        return encode(201, { payment_id: paymentId(), created_at: rfc3339Nano(clock.nowMs()) });
      }
      const operation = /^\/api\/v2\/(payment|cashout)\/status$/.exec(req.path)?.[1];
      if (!operation || req.method !== "GET") {
        if (/^\/api\/v2\/(payment|cashout)\//.test(req.path)) return authenticate(req) ?? httpError("404 page not found", 404);
        return httpError("404 page not found", 404);
      }
      const refused = authenticate(req);
      if (refused) return refused;
      const answer = encode(200, { merchant_id: credentials.merchantId, operation, served_at: rfc3339Nano(clock.nowMs()) });
      if (drift === "header-appeared") answer.headers["X-Request-Id"] = randomUUID();
      return answer;
    },
  };
}
