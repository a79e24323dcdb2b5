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
import { b64url, parseJws, rsaKey, type SigningKey, signJws, verifiedWith } from "./jws.js";
import type { RunningProvider } from "./kit.js";

/**
 * A provider whose tokens come from Keycloak: the merchant API's token route and login hand the
 * credentials to Keycloak's OIDC token endpoint (client_credentials with scope openid, and the
 * password grant) and pass its answer through; the payment routes are a resource server that
 * verifies Keycloak's tokens as its bearer-only adapter did. Copied from Keycloak's sources as read
 * (keycloak/keycloak and keycloak/keycloak-client, core synced at b7966789 "after Keycloak server
 * 26.7.0"):
 * - representations/AccessTokenResponse.java: access_token, expires_in, refresh_expires_in,
 *   refresh_token, token_type, id_token, not-before-policy, session_state, then scope (declared
 *   order, nulls left out by ObjectMapperResolver's NON_NULL);
 * - ClientIdAndSecretAuthenticator.java (03f1a163), ClientAuthUtil.java (65d9c201): a wrong or
 *   missing secret 401 {"error":"unauthorized_client","error_description":"Invalid client or
 *   Invalid client credentials"}; an unknown client 401 invalid_client, same text; no client_id
 *   400 invalid_client "Missing client_id parameter"; application/json;
 * - TokenEndpoint.java: a request without grant_type 400 invalid_request "Missing form parameter:
 *   grant_type" (what the route answers for a body it cannot turn into the form);
 * - JWSBuilder.encodeHeader: `{"alg":"RS256","typ" : "JWT","kid" : "<kid>"}`, spaces and all;
 *   refresh tokens HS512 (Constants.INTERNAL_SIGNATURE_ALGORITHM) with typ "Refresh";
 * - TokenVerifier.java: "Token is not active" (expired), "Invalid token signature", "Failed to parse
 *   JWT"; BearerTokenRequestAuthenticator.java (09eccaf6): 401, `Bearer realm="<realm>"`, then
 *   error="invalid_token" and error_description="<message>" when there is one.
 * Not read in source (as Keycloak answers it, from its docs): the password grant's wrong password,
 * 401 {"error":"invalid_grant","error_description":"Invalid user credentials"}. The payment routes'
 * own refusals are the resource server's code, in the adapter's challenge form.
 */
export const KEYCLOAK_CREDENTIALS = {
  apiKey: "acme-merchant-client",
  apiSecret: "kc-secret-3d9f1a7b2c",
  paymentToken: "kc-pay-6e2b9d41",
  email: "shop@keycloak-provider.test",
  password: "kc-password-8c1f",
  merchantId: "8f14e45f-ceea-467f-a0e2-a1b2c3d4e5f6",
};

/** Drift: code: the wrong secret's error becomes invalid_client (Keycloak's newer client-not-found mapping for every failure). */
export const KEYCLOAK_DRIFTS = ["code"] as const;

const REALM = "acme";
const ISSUER = `https://kc.keycloak-provider.test/realms/${REALM}`;
const TTL = 300;
const REFRESH_TTL = 1800;
const INVALID_CLIENT = "Invalid client or Invalid client credentials";

export function startKeycloakProvider(options?: FrameworkOptions): Promise<RunningProvider> {
  return startFrameworkProvider(keycloakApp, KEYCLOAK_CREDENTIALS, options);
}

async function keycloakApp({ clock, credentials, issued, drift }: AppContext): Promise<FrameworkApp> {
  const key = await rsaKey();
  const kid = b64url(randomBytes(32));
  const refreshKey: SigningKey = { alg: "HS256", secret: randomBytes(64) };
  const refreshKid = randomUUID();

  const json = (status: number, value: unknown): RawAnswer => ({
    status,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(value),
  });
  const oauthError = (status: number, error: string, description: string) => json(status, { error, error_description: description });
  /** The adapter's challenge: no body. */
  const challenge = (description?: string): RawAnswer => ({
    status: 401,
    headers: { "WWW-Authenticate": `Bearer realm="${REALM}"${description ? `, error="invalid_token", error_description="${description}"` : ""}` },
  });

  /** JWSBuilder's header, byte for byte. */
  const header = (alg: string, keyId: string) => `{"alg":"${alg}","typ" : "JWT","kid" : "${keyId}"}`;
  const tokens = (iat: number) => {
    const session = randomUUID();
    const base = { exp: iat + TTL, iat, jti: randomUUID(), iss: ISSUER };
    const access = signJws(
      header("RS256", kid),
      JSON.stringify({
        ...base,
        aud: "account",
        sub: credentials.merchantId,
        typ: "Bearer",
        azp: credentials.apiKey,
        sid: session,
        scope: "openid profile email",
      }),
      key,
    );
    // HS512 in Keycloak; the fake signs HS256 under that header: no client can check it either way.
    const refresh = signJws(
      header("HS512", refreshKid),
      JSON.stringify({
        exp: iat + REFRESH_TTL,
        iat,
        jti: randomUUID(),
        iss: ISSUER,
        aud: ISSUER,
        sub: credentials.merchantId,
        typ: "Refresh",
        azp: credentials.apiKey,
        sid: session,
        scope: "openid profile email",
      }),
      refreshKey,
    );
    const id = signJws(
      header("RS256", kid),
      JSON.stringify({ ...base, aud: credentials.apiKey, sub: credentials.merchantId, typ: "ID", azp: credentials.apiKey, sid: session }),
      key,
    );
    issued.push(access, refresh, id);
    return json(200, {
      access_token: access,
      expires_in: TTL,
      refresh_expires_in: REFRESH_TTL,
      refresh_token: refresh,
      token_type: "Bearer",
      id_token: id,
      "not-before-policy": 0,
      session_state: session,
      scope: "openid profile email",
    });
  };

  const tokenRoute = (req: FrameworkRequest): RawAnswer => {
    const data = parseJsonObject(req.body);
    if (data === "invalid") return oauthError(400, "invalid_request", "Missing form parameter: grant_type");
    const { key: clientId, secret } = tokenCredentials(req, data);
    if (typeof clientId !== "string" || clientId === "") return oauthError(400, "invalid_client", "Missing client_id parameter");
    if (clientId !== credentials.apiKey) return oauthError(401, "invalid_client", INVALID_CLIENT);
    if (secret !== credentials.apiSecret) return oauthError(401, drift === "code" ? "invalid_client" : "unauthorized_client", INVALID_CLIENT);
    return tokens(clock.nowSeconds());
  };

  /** The adapter: the refusal, or undefined for a good access token. */
  const authenticate = (req: FrameworkRequest): RawAnswer | undefined => {
    const token = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (token === undefined) return challenge();
    const jws = parseJws(token);
    if (typeof jws === "string") return challenge("Failed to parse JWT");
    if (jws.header.kid !== kid || !verifiedWith(jws, key)) return challenge("Invalid token signature");
    const exp = jws.payload.exp;
    if (typeof exp === "number" && clock.nowSeconds() > exp) return challenge("Token is not active");
    return undefined;
  };

  return {
    expiredToken: () => {
      const iat = clock.nowSeconds() - TTL - 60;
      const jwt = signJws(
        header("RS256", kid),
        JSON.stringify({ exp: iat + TTL, iat, jti: randomUUID(), iss: ISSUER, aud: "account", sub: credentials.merchantId, typ: "Bearer" }),
        key,
      );
      issued.push(jwt);
      return jwt;
    },
    handle(req) {
      if (req.path === "/api/v2/auth/token" && req.method === "POST") return tokenRoute(req);
      if (req.path === "/api/login_check" && req.method === "POST") {
        const data = parseJsonObject(req.body);
        if (data === "invalid" || data === undefined) return oauthError(400, "invalid_request", "Missing form parameter: grant_type");
        if (data.username !== credentials.email || data.password !== credentials.password)
          return oauthError(401, "invalid_grant", "Invalid user credentials");
        return tokens(clock.nowSeconds());
      }
      if (req.path === "/api/v2/payment/init" && req.method === "POST") {
        const bearer = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
        if (bearer === undefined) return challenge();
        if (bearer.split(".").length === 3) return challenge("Payment token required");
        if (bearer !== credentials.paymentToken) return challenge("Unknown payment token");
        return json(201, { id: paymentId(), status: "CREATED" });
      }
      if (/^\/api\/v2\/(payment|cashout)\/status$/.test(req.path) && req.method === "GET")
        return authenticate(req) ?? json(200, { merchant: credentials.merchantId, status: "ok" });
      return authenticate(req) ?? json(404, { error: "not_found" });
    },
  };
}
