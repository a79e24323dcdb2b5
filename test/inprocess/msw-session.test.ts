import { setupServer } from "msw/node";
import { afterEach, describe, expect, it } from "vitest";
import { createMswHandlers } from "../../src/adapters/msw.js";
import { createSandbox } from "../../src/app/sandbox.js";

/**
 * A session's handlers in-process (issue 13): msw's setupServer maps the integration's own base URL
 * to one session, so every request it makes (no credentials, another merchant's) lands in that
 * session's journal and report, as under the session's base URL on a real server.
 */

const BASE = "https://merchant.test";
const servers: Array<ReturnType<typeof setupServer>> = [];

afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

function listen(...handlers: ReturnType<typeof createMswHandlers>): void {
  const server = setupServer(...handlers);
  server.listen({ onUnhandledRequest: "error" });
  servers.push(server);
}

function postJson(body: unknown): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

describe("createMswHandlers(sandbox, { baseUrl, session })", () => {
  it("answers every request to the base URL as the session's: its credentials work, none or another merchant's are journaled in it", async () => {
    const sandbox = await createSandbox({ frozenAt: "2026-01-01T00:00:00Z" });
    const session = await sandbox.sessions.create();
    const { merchant } = sandbox.sessions.info(session);
    listen(...createMswHandlers(sandbox, { baseUrl: BASE, session: session.id }));

    const token = await fetch(`${BASE}/api/v2/auth/token`, postJson({ api_key: merchant.api_key, api_secret: merchant.api_secret }));
    expect(token.status).toBe(200);
    const { access_token } = await token.json();
    const paid = await fetch(`${BASE}/api/v2/payment/orders`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(paid.status).toBe(200);
    expect((await paid.json()).merchant_id).toBe(merchant.id);

    const bare = await fetch(`${BASE}/api/v2/payment/orders`);
    expect(bare.status).toBe(401);
    const other = await fetch(`${BASE}/api/v2/auth/token`, postJson({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }));
    expect(other.status).toBe(401);
    expect((await other.json()).code).toBe("session_credentials_mismatch");

    const entries = sandbox.journal.list({ session: session.id });
    expect(entries.map((e) => [e.path, e.status, e.code, e.viaSessionUrl])).toEqual([
      ["/api/v2/auth/token", 200, undefined, true],
      ["/api/v2/payment/orders", 200, undefined, true],
      ["/api/v2/payment/orders", 401, "credentials_missing", true],
      ["/api/v2/auth/token", 401, "session_credentials_mismatch", true],
    ]);

    // The control plane stays at the root of the base URL: the session's report is there.
    const report = await fetch(`${BASE}/__sandbox/sessions/${session.id}/report`);
    expect(report.status).toBe(200);
    const { findings } = await report.json();
    expect(findings.map((f: { code: string; severity: string; evidence: string[] }) => [f.code, f.severity, f.evidence])).toEqual([
      ["missing_credentials", "error", [entries[2]!.id]],
      ["credentials_of_other_session", "error", [entries[3]!.id]],
    ]);
  });

  it("without the option, reaches a session by the path of its base_url; an ended session's answers 404 session_url_unknown", async () => {
    const sandbox = await createSandbox();
    const session = await sandbox.sessions.create();
    const info = sandbox.sessions.info(session);
    // No Host to build it from in-process: the base_url is the path alone.
    expect(info.base_url).toBe(`/s/${session.id}`);
    listen(...createMswHandlers(sandbox, { baseUrl: BASE }));

    const token = await fetch(
      `${BASE}${info.base_url}/api/v2/auth/token`,
      postJson({ api_key: info.merchant.api_key, api_secret: info.merchant.api_secret }),
    );
    expect(token.status).toBe(200);
    expect(sandbox.journal.list({ session: session.id })).toHaveLength(1);

    sandbox.sessions.delete(session.id);
    const ended = await fetch(`${BASE}${info.base_url}/api/v2/auth/token`, postJson({}));
    expect(ended.status).toBe(404);
    expect((await ended.json()).code).toBe("session_url_unknown");
  });

  it("refuses a session option that is not a session id, saying what to pass", async () => {
    const sandbox = await createSandbox();
    expect(() => createMswHandlers(sandbox, { baseUrl: BASE, session: "../x" })).toThrow(
      new TypeError("session '../x' is not a session id: pass the id of sandbox.sessions.create(), e.g. 'ses_0123456789abcdef'"),
    );
  });
});
