import {
  type ClientSettings,
  described,
  type FrameworkClient,
  failed,
  frameworkClient,
  isJwt,
  isObject,
  ok,
  type Reply,
  refused,
  type Verdict,
} from "./framework-client.js";

/**
 * A merchant client written for the Keycloak provider (keycloak.ts), as an OIDC client library reads
 * its answers: the token answer must be OAuth's with Keycloak's extras (a JWT access_token, token_type
 * Bearer, expires_in, a refresh_token and a JWT id_token, which it keeps for its logout); the token
 * route's errors are `{"error","error_description"}`; the resource server's refusals are in the
 * challenge: "Token is not active" renews, "Invalid token signature" and "Failed to parse JWT"
 * re-authenticate, a bare `Bearer realm=` authenticates.
 */
export function keycloakClient(settings: ClientSettings): FrameworkClient {
  const challengeOf = (r: Reply) => {
    const c = r.headers.get("www-authenticate") ?? "";
    return { bearer: /^Bearer realm="[^"]+"/.test(c), description: /error_description="([^"]*)"/.exec(c)?.[1] };
  };
  const classify = (r: Reply): Verdict => {
    const b = r.json;
    if (isObject(b) && typeof b.error === "string" && typeof b.error_description === "string") {
      if (r.status === 401 && (b.error === "unauthorized_client" || b.error === "invalid_client" || b.error === "invalid_grant"))
        return refused("wrong credentials");
      if (r.status === 400) return refused(`request rejected: ${b.error_description}`);
    }
    const { bearer, description } = challengeOf(r);
    if (r.status === 401 && bearer) {
      if (description === undefined) return { act: "reauthenticate", why: "no token taken" };
      if (description === "Token is not active") return { act: "renew", why: JSON.stringify(description) };
      if (description === "Invalid token signature" || description === "Failed to parse JWT")
        return { act: "reauthenticate", why: JSON.stringify(description) };
      if (description === "Payment token required" || description === "Unknown payment token")
        return refused(`payment token refused: ${description}`);
    }
    return failed(`unexpected answer: ${described(r)}`);
  };
  return frameworkClient(settings, {
    classify,
    tokenOf(r) {
      if (r.status !== 200) {
        const v = classify(r);
        return "act" in v ? failed(`unexpected ${v.why} from the token route`) : v;
      }
      const b = r.json;
      if (
        !isObject(b) ||
        !isJwt(b.access_token) ||
        b.token_type !== "Bearer" ||
        typeof b.expires_in !== "number" ||
        typeof b.refresh_token !== "string" ||
        !isJwt(b.id_token) ||
        b.id_token === b.access_token
      )
        return failed(`not Keycloak's token answer: ${described(r)}`);
      return b.access_token;
    },
    protectedAnswer: (r) => (isObject(r.json) && r.json.status === "ok" ? ok("read the answer") : failed(`unexpected answer: ${described(r)}`)),
    created: (r) =>
      isObject(r.json) && typeof r.json.id === "string" && r.json.status === "CREATED"
        ? ok("payment created")
        : failed(`unexpected answer: ${described(r)}`),
    initRefused: "payment/init refused",
  });
}
