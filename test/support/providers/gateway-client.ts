import { type ClientSettings, described, type FrameworkClient, failed, frameworkClient, type Reply } from "./framework-client.js";
import { goReading } from "./go-client.js";

/**
 * The Go service's client (go-client.ts) as a team behind the gateway (gateway.ts) runs it: its
 * back-off reads the rate limiter's budget, so an answer without `X-RateLimit-Remaining-Minute` as a
 * whole number below `X-RateLimit-Limit-Minute` fails its step; nginx's HTML 401 page for a call
 * without a token means "authenticate first".
 */
export function gatewayClient(settings: ClientSettings): FrameworkClient {
  const go = goReading();
  const budget = (r: Reply) => {
    const left = r.headers.get("x-ratelimit-remaining-minute");
    const limit = r.headers.get("x-ratelimit-limit-minute");
    return left !== null && limit !== null && /^\d+$/.test(left) && /^\d+$/.test(limit) && Number(left) < Number(limit)
      ? undefined
      : failed(`no rate-limit budget: ${described(r)}`);
  };
  return frameworkClient(settings, {
    classify(r, path) {
      const missing = budget(r);
      if (missing) return missing;
      if (
        r.status === 401 &&
        (r.headers.get("content-type") ?? "").startsWith("text/html") &&
        r.text.includes("<title>401 Authorization Required</title>")
      )
        return { act: "reauthenticate", why: "the gateway's 401 page" };
      return go.classify(r, path);
    },
    tokenOf: (r, path) => budget(r) ?? go.tokenOf(r, path),
    protectedAnswer: (r) => budget(r) ?? go.protectedAnswer(r),
    created: (r) => budget(r) ?? go.created(r),
    initRefused: go.initRefused,
  });
}
