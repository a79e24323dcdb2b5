import {
  type ClientSettings,
  described,
  type FrameworkClient,
  type FrameworkReading,
  failed,
  frameworkClient,
  isJwt,
  isObject,
  ok,
  type Reply,
  refused,
  type StepResult,
  type Verdict,
} from "./framework-client.js";

/**
 * A merchant client written for the Go service (go-service.ts): its refusals are http.Error's
 * text/plain lines, read by what golang-jwt's errors say ("token is expired" renews; a malformed
 * token or a bad signature re-authenticates; "missing bearer token" authenticates); its token
 * answer must carry `expires_at` as an RFC 3339 time the client schedules its renewal from.
 */
export function goClient(settings: ClientSettings): FrameworkClient {
  return frameworkClient(settings, goReading());
}

/** How the Go service's clients read its answers (the gateway's client reads them so too). */
export function goReading(): FrameworkReading {
  const text = (r: Reply) => r.text.trim();
  const plain = (r: Reply) => (r.headers.get("content-type") ?? "").startsWith("text/plain");

  const classify = (r: Reply): Verdict => {
    if (!plain(r)) return failed(`not http.Error's text/plain: ${described(r)}`);
    const t = text(r);
    if (r.status === 401 && t.endsWith("token is expired")) return { act: "renew", why: JSON.stringify(t) };
    if (r.status === 401 && (t.startsWith("token is malformed") || t.startsWith("token signature is invalid")))
      return { act: "reauthenticate", why: JSON.stringify(t) };
    if (r.status === 401 && t === "missing bearer token") return { act: "reauthenticate", why: JSON.stringify(t) };
    if (r.status === 401 && t === "invalid credentials") return refused("wrong credentials");
    if (r.status === 401 && (t === "payment token required" || t === "unknown payment token")) return refused(`payment token refused: ${t}`);
    if (r.status === 400) return refused(`request rejected: ${t}`);
    return failed(`unexpected answer: ${described(r)}`);
  };

  return {
    classify,
    tokenOf(r) {
      if (r.status !== 200) {
        const v = classify(r);
        return "act" in v ? failed(`unexpected ${v.why} from the token route`) : v;
      }
      const b = r.json;
      const token = isObject(b) ? (b.access_token ?? b.token) : undefined;
      if (!isObject(b) || !isJwt(token)) return failed(`unexpected answer: ${described(r)}`);
      // The route's own token answer schedules the renewal from expires_at (the login's carries it too).
      if (typeof b.expires_at !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(b.expires_at))
        return failed(`no RFC 3339 expires_at to schedule the renewal: ${described(r)}`);
      return token;
    },
    protectedAnswer(r: Reply): StepResult {
      const b = r.json;
      return isObject(b) && typeof b.merchant_id === "string" && typeof b.served_at === "string"
        ? ok("read the answer")
        : failed(`unexpected answer: ${described(r)}`);
    },
    created(r) {
      const b = r.json;
      return isObject(b) && typeof b.payment_id === "string" && typeof b.created_at === "string"
        ? ok("payment created")
        : failed(`unexpected answer: ${described(r)}`);
    },
    initRefused: "payment/init refused",
  };
}
