import { setupServer } from "msw/node";
import { afterEach, describe, expect, it } from "vitest";
import { createMswHandlers } from "../../src/adapters/msw.js";
import { testSandbox } from "../support/keys.js";

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

function listen(...handlers: ReturnType<typeof createMswHandlers>): ReturnType<typeof setupServer> {
  const server = setupServer(...handlers);
  server.listen({ onUnhandledRequest: "error" });
  servers.push(server);
  return server;
}

function postJson(body: unknown): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

describe("createMswHandlers(sandbox, { baseUrl, session })", () => {
  it("answers every request to the base URL as the session's: its credentials work, none or another merchant's are journaled in it", async () => {
    const sandbox = await testSandbox({ frozenAt: "2026-01-01T00:00:00Z" });
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
    const sandbox = await testSandbox();
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
    const sandbox = await testSandbox();
    expect(() => createMswHandlers(sandbox, { baseUrl: BASE, session: "../x" })).toThrow(
      new TypeError("session '../x' is not a session id: pass the id of sandbox.sessions.create(), e.g. 'ses_0123456789abcdef'"),
    );
  });

  it("regression: a session's secret in the URL of a request whose body was still streaming when the session ended is redacted in the journal", async () => {
    const sandbox = await testSandbox({ frozenAt: "2026-01-01T00:00:00Z" });
    const session = await sandbox.sessions.create();
    const secret = sandbox.sessions.info(session).merchant.api_secret;
    const server = listen(...createMswHandlers(sandbox, { baseUrl: BASE }));
    // The body's end is held back until the session has ended; the handler has started (and waits
    // for the body) one turn of the event loop after msw announced the request.
    const started = new Promise<void>((resolve) => server.events.on("request:start", () => resolve()));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{"));
      },
      async pull(controller) {
        await released;
        controller.enqueue(new TextEncoder().encode("}"));
        controller.close();
      },
    });
    const answered = fetch(`${BASE}/somewhere/${secret}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    await started;
    await new Promise((resolve) => setImmediate(resolve));
    expect(sandbox.sessions.delete(session.id)).toBe(true);
    release();
    const r = await answered;
    expect(r.status).toBe(404);
    const text = await r.text();
    expect(JSON.parse(text).instance).toMatch(/^\/somewhere\/ss_[0-9a-f]\.\.\.\(27 chars, sha256:[0-9a-f]{8}\)$/);
    expect(text).not.toContain(secret);
    const journaled = JSON.stringify(sandbox.journal.list({}));
    expect(sandbox.journal.list({}).at(-1)!.path).toBe(JSON.parse(text).instance);
    expect(journaled).not.toContain(secret);
  });
});
