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
 * A merchant client written for a Spring Security resource server (spring.ts, RESEARCH-24 §2):
 * refusals of a bearer token have no body, so it branches on the `WWW-Authenticate` challenge
 * (RFC 6750): a bare `Bearer` means no token was taken (authenticate); `error="invalid_token"`
 * whose description says "Jwt expired at …" (after the decoder's "An error occurred while
 * attempting to decode the Jwt: ") renews the token, any other invalid_token re-authenticates;
 * `invalid_request` is a bad request. Refusals without a challenge are Spring Boot's error body
 * `{"timestamp","status","error","path"}`: 401 wrong credentials, 400 a rejected request.
 */
export function springClient(settings: ClientSettings): FrameworkClient {
  const classify = (r: Reply, path: string): Verdict => {
    const challenge = r.headers.get("www-authenticate");
    if (challenge !== null) {
      const c = parseChallenge(challenge);
      if (c === undefined) return failed(`unexpected challenge: ${described(r)}`);
      if (c.error === undefined)
        return r.status === 401 ? { act: "reauthenticate", why: "no token taken (Bearer)" } : failed(`unexpected answer: ${described(r)}`);
      const description = c.error_description ?? "";
      if (c.error === "invalid_token" && r.status === 401) {
        if (/(^|: )Jwt expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(description))
          return { act: "renew", why: "invalid_token, Jwt expired" };
        return { act: "reauthenticate", why: `invalid_token (${description})` };
      }
      if (c.error === "invalid_request" && r.status === 400) return refused(`bad request (${description})`);
      return failed(`unexpected challenge: ${described(r)}`);
    }
    const b = r.json;
    if (isObject(b) && b.status === r.status && typeof b.error === "string" && typeof b.timestamp === "string" && b.path === path) {
      if (r.status === 401) return refused("wrong credentials");
      if (r.status === 400) return refused(`request rejected: ${b.error}`);
    }
    return failed(`unexpected answer: ${described(r)}`);
  };

  return frameworkClient(settings, {
    classify,
    tokenOf(r, path) {
      if (r.status !== 200) {
        const v = classify(r, path);
        if (!("act" in v)) return v;
        return v.why === "no token taken (Bearer)" ? refused("wrong credentials (Bearer)") : failed(`unexpected ${v.why} from ${path}`);
      }
      const b = r.json;
      if (!isObject(b) || !isJwt(b.access_token) || b.token_type !== "Bearer" || typeof b.expires_in !== "number")
        return failed(`unexpected answer: ${described(r)}`);
      return b.access_token;
    },
    protectedAnswer: (r) =>
      isObject(r.json) && typeof r.json.operation === "string" ? ok("read the answer") : failed(`unexpected answer: ${described(r)}`),
    created(r) {
      const b = r.json;
      return isObject(b) && typeof b.paymentId === "string" && typeof b.checkoutUrl === "string" && b.checkoutUrl.startsWith("https://")
        ? ok("payment created")
        : failed(`unexpected answer: ${described(r)}`);
    },
    initRefused: "payment token refused",
  });
}

/**
 * RFC 6750 §3: `Bearer` alone, or `Bearer k="v", k="v"`. Undefined when it is not that. One pass
 * over the header (a provider's text), no backtracking.
 */
export function parseChallenge(header: string): Record<string, string> | undefined {
  if (!/^Bearer\b/i.test(header)) return undefined;
  const params: Record<string, string> = {};
  const rest = header.slice(6).trim();
  if (rest === "") return params;
  for (const m of rest.matchAll(/([a-z_]+)="([^"]*)"(?:, |$)/gy)) params[m[1]!] = m[2]!;
  return Object.keys(params).length > 0 ? params : undefined;
}
