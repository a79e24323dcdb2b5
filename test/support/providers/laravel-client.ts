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
  type StepResult,
  type Verdict,
} from "./framework-client.js";

/**
 * A merchant client written for a Laravel + tymon/jwt-auth provider (laravel.ts, RESEARCH-24 §3).
 * It logs every answer's X-Request-Id (a support ticket quotes it), so an answer without one, or
 * an envelope whose `request_id` is not the header's, fails the step. It reads the app's envelope
 * `{"success":true,"data":{…}}`, tymon's token answer `{"access_token","token_type":"bearer",
 * "expires_in"}`, validation errors (422 `{"message","errors":{field:[…]}}`) and the `jwt.auth`
 * middleware's `{"message"}`: "Token has expired" renews; "Token not provided" authenticates; the
 * texts of a token that cannot be used re-authenticate; `{"error":"Unauthorized"}` is wrong
 * credentials.
 */
const REAUTHENTICATE = ["Token Signature could not be verified.", "Wrong number of segments", "Malformed token", "The token has been blacklisted"];

export function laravelClient(settings: ClientSettings): FrameworkClient {
  const requestId = (r: Reply): string | undefined => {
    const id = r.headers.get("x-request-id");
    return id !== null && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) ? id : undefined;
  };
  /** The app's envelope: its data, or why not. */
  const envelope = (r: Reply): { data: Record<string, unknown> } | { fail: StepResult } => {
    const b = r.json;
    if (!isObject(b) || b.success !== true || !isObject(b.data)) return { fail: failed(`unexpected answer: ${described(r)}`) };
    if (b.request_id !== requestId(r)) return { fail: failed(`the envelope's request_id is not the X-Request-Id header (${described(r)})`) };
    return { data: b.data };
  };

  const classify = (r: Reply): Verdict => {
    if (requestId(r) === undefined) return failed(`no X-Request-Id: ${described(r)}`);
    const b = r.json;
    if (r.status === 401 && isObject(b) && b.error === "Unauthorized" && Object.keys(b).length === 1) return refused("wrong credentials");
    if (r.status === 422 && isObject(b) && typeof b.message === "string" && isObject(b.errors))
      return refused(`validation failed: ${Object.keys(b.errors).sort().join(", ")}`);
    if (r.status === 401 && isObject(b) && typeof b.message === "string" && Object.keys(b).length === 1) {
      const m = b.message;
      if (m === "Token has expired") return { act: "renew", why: '"Token has expired"' };
      if (m === "Token not provided") return { act: "reauthenticate", why: '"Token not provided"' };
      if (REAUTHENTICATE.includes(m) || m.startsWith("Could not decode token: ")) return { act: "reauthenticate", why: JSON.stringify(m) };
      if (m === "Invalid payment token.") return refused("payment token refused");
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
      if (requestId(r) === undefined) return failed(`no X-Request-Id: ${described(r)}`);
      const b = r.json;
      if (!isObject(b) || !isJwt(b.access_token) || b.token_type !== "bearer" || typeof b.expires_in !== "number")
        return failed(`unexpected answer: ${described(r)}`);
      return b.access_token;
    },
    protectedAnswer(r) {
      const e = envelope(r);
      return "fail" in e ? e.fail : ok("read the answer");
    },
    created(r) {
      const e = envelope(r);
      if ("fail" in e) return e.fail;
      const data = e.data;
      return typeof data.payment_id === "string" && typeof data.checkout_url === "string" && data.checkout_url.startsWith("https://")
        ? ok("payment created")
        : failed(`unexpected answer: ${described(r)}`);
    },
    initRefused: "payment/init refused",
  });
}
