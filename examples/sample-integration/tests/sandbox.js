/**
 * The merchant sandbox's control plane (/__sandbox/, at the sandbox's root), for the tests that
 * prove what the client does when a token expires, is revoked or the token endpoint is busy. The
 * session comes from the base URL the integration is configured with (`http://host/s/<session id>`),
 * or from MERCHANT_SANDBOX_URL and MERCHANT_SANDBOX_SESSION; MERCHANT_SANDBOX_ADMIN_TOKEN if the
 * sandbox has one.
 */
export function sandboxFromEnv(env = process.env) {
  const fromBase = /^(https?:\/\/[^/]+)\/s\/(ses_[0-9a-f]+)\/?$/.exec(env.MERCHANT_API_BASE_URL ?? "");
  const url = (env.MERCHANT_SANDBOX_URL || fromBase?.[1] || "").replace(/\/+$/, "");
  const session = env.MERCHANT_SANDBOX_SESSION || fromBase?.[2];
  if (!url || !session) {
    throw new Error(
      "These tests drive a merchant-sandbox session: set MERCHANT_API_BASE_URL to the session's base_url (POST /__sandbox/sessions), or MERCHANT_SANDBOX_URL and MERCHANT_SANDBOX_SESSION.",
    );
  }
  const adminToken = env.MERCHANT_SANDBOX_ADMIN_TOKEN;
  // The client's own clock follows the session's: every advance moves both by the same amount.
  let offsetMs = 0;

  async function control(method, path, body) {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...(body ? { "content-type": "application/json" } : {}), ...(adminToken ? { "x-admin-token": adminToken } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    return JSON.parse(text);
  }

  const sessionPath = `/__sandbox/sessions/${session}`;
  return {
    session,
    /** The client's clock, in step with the session's. */
    now: () => Date.now() + offsetMs,
    /** Moves the session's clock and the client's by the same amount: no test sleeps. */
    async advance(seconds) {
      await control("POST", `${sessionPath}/clock`, { advance: `${seconds}s` });
      offsetMs += seconds * 1000;
    },
    /** POST /__sandbox/sessions/{id}/actions: break the session now, or script its next requests. */
    actions: (body) => control("POST", `${sessionPath}/actions`, body),
    /** The session's journal since a request id (`since: undefined` for all of it), oldest first. */
    async requests(since) {
      const query = new URLSearchParams({ session, ...(since ? { since } : {}) });
      return (await control("GET", `/__sandbox/requests?${query}`)).requests;
    },
    /** The id of the session's latest request, to read what a test adds after it. */
    async lastRequestId() {
      const [last] = (await control("GET", `/__sandbox/requests?${new URLSearchParams({ session, limit: "1" })}`)).requests;
      return last?.id;
    },
    report: async () => (await control("GET", `${sessionPath}/report`)).findings,
    scan: async (text) => (await control("POST", "/__sandbox/scan", { text })).hits,
  };
}

/** A journal entry as one comparable line: "POST /api/v2/auth/token 200" (with the code of a refusal). */
export const line = (entry) => `${entry.method} ${entry.path} ${entry.status}${entry.code ? ` ${entry.code}` : ""}`;
