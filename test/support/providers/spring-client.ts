import {
  type ClientSettings,
  described,
  type FrameworkClient,
  failed,
  isJwt,
  isObject,
  merchantRequests,
  ok,
  protectedWithRetry,
  type Reply,
  refused,
  type StepResult,
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
  const statuses: number[] = [];
  const send = merchantRequests(settings, statuses);

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
  const keepToken = (r: Reply, path: string): StepResult => {
    if (r.status !== 200) {
      const v = classify(r, path);
      if (!("act" in v)) return v;
      return v.why === "no token taken (Bearer)" ? refused("wrong credentials (Bearer)") : failed(`unexpected ${v.why} from ${path}`);
    }
    const b = r.json;
    if (!isObject(b) || !isJwt(b.access_token) || b.token_type !== "Bearer" || typeof b.expires_in !== "number")
      return failed(`unexpected answer: ${described(r)}`);
    client.token = b.access_token;
    return ok("kept the token");
  };

  const client: FrameworkClient = {
    statuses,
    token: undefined,
    startStep: () => {
      statuses.length = 0;
    },
    async authenticate(via, omit) {
      return keepToken(await send.token(via, omit), "/api/v2/auth/token");
    },
    callProtected(path) {
      return protectedWithRetry(
        client,
        () => send.get(path, client.token),
        (r) => (isObject(r.json) && typeof r.json.operation === "string" ? ok("read the answer") : failed(`unexpected answer: ${described(r)}`)),
        (r) => classify(r, path),
      );
    },
    async initPayment(bearer) {
      const path = "/api/v2/payment/init";
      const r = await send.initPayment(bearer);
      if (r.status === 201) {
        const b = r.json;
        return isObject(b) && typeof b.paymentId === "string" && typeof b.checkoutUrl === "string" && b.checkoutUrl.startsWith("https://")
          ? ok("payment created")
          : failed(`unexpected answer: ${described(r)}`);
      }
      const v = classify(r, path);
      return "act" in v ? refused(`payment token refused: ${v.why}`) : v;
    },
    async login() {
      return keepToken(await send.login(), "/api/login_check");
    },
  };
  return client;
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
