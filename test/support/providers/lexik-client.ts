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
 * A merchant client written for a Symfony + LexikJWTAuthenticationBundle provider. Lexik has no
 * error codes, so its clients branch on the message texts (lexik.ts, RESEARCH-24 §1.2):
 * "Expired JWT Token" renews the token; "Invalid JWT Token" and "JWT Token not found"
 * re-authenticate; "Invalid credentials." is wrong credentials; "Invalid payment token." the
 * payment token refused. A refusal is `{"code": <the status>, "message"}`; a 400 is Symfony's
 * problem body `{"type","title","status","detail"}`. Anything else fails the step, saying what came.
 */
export function lexikClient(settings: ClientSettings): FrameworkClient {
  /** A refusal in Lexik's terms, or undefined when the answer is not one. */
  const refusal = (r: Reply): { message: string } | { detail: string } | undefined => {
    const b = r.json;
    if (isObject(b) && b.code === r.status && typeof b.message === "string" && Object.keys(b).length === 2) return { message: b.message };
    if (isObject(b) && b.status === r.status && typeof b.title === "string" && typeof b.detail === "string") return { detail: b.detail };
    return undefined;
  };
  const classify = (r: Reply): Verdict => {
    const why = refusal(r);
    if (why === undefined) return failed(`unexpected answer: ${described(r)}`);
    if ("detail" in why) return refused(`request rejected: ${why.detail}`);
    switch (why.message) {
      case "Expired JWT Token":
        return { act: "renew", why: '"Expired JWT Token"' };
      case "Invalid JWT Token":
      case "JWT Token not found":
        return { act: "reauthenticate", why: JSON.stringify(why.message) };
      case "Invalid credentials.":
        return refused("wrong credentials");
      case "Invalid payment token.":
        return refused("payment token refused");
      default:
        return failed(`unexpected message: ${JSON.stringify(why.message)} (${described(r)})`);
    }
  };
  return frameworkClient(settings, {
    classify,
    tokenOf(r) {
      if (r.status !== 200) {
        const v = classify(r);
        return "act" in v ? failed(`unexpected ${v.why} from the token route`) : v;
      }
      return isObject(r.json) && isJwt(r.json.token) ? r.json.token : failed(`unexpected answer: ${described(r)}`);
    },
    protectedAnswer: (r) =>
      isObject(r.json) && typeof r.json.operation === "string" ? ok("read the answer") : failed(`unexpected answer: ${described(r)}`),
    created(r) {
      const b = r.json;
      return isObject(b) && typeof b.id === "string" && typeof b.url === "string" && b.url.startsWith("https://")
        ? ok("payment created")
        : failed(`unexpected answer: ${described(r)}`);
    },
    initRefused: "payment/init refused",
  });
}
