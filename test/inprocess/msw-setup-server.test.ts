import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Sandbox } from "../../src/app/sandbox.js";
import { testSandbox } from "../support/keys.js";
import { createMswHandlers } from "../../src/adapters/msw.js";
import { openEventStream } from "../support/event-stream.js";

/**
 * In-process use, as a merchant's own unit tests would do it: msw's setupServer with the
 * sandbox's handlers, no port, no container. The integration's HTTP client (here: fetch) is
 * unchanged; requests to the base URL are answered by the sandbox core.
 */

const BASE = "https://api.merchant.test";
const credentials = {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),
};

describe("msw setupServer with the sandbox's handlers", () => {
  let sandbox: Sandbox;
  const server = setupServer();

  beforeAll(async () => {
    sandbox = await testSandbox({ frozenAt: "2026-01-01T00:00:00Z" });
    server.use(...createMswHandlers(sandbox, { baseUrl: BASE }));
    server.listen({ onUnhandledRequest: "error" });
  });
  afterAll(() => server.close());

  it("exchanges credentials and calls a protected endpoint until the token expires on the sandbox clock", async () => {
    const { access_token } = await (await fetch(`${BASE}/api/v2/auth/token`, credentials)).json();
    const call = () => fetch(`${BASE}/api/v2/payment/p_1`, { headers: { authorization: `Bearer ${access_token}` } });
    expect((await call()).status).toBe(200);

    sandbox.clock.advance(3600 * 1000);
    const expired = await call();
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe(
      'Bearer realm="merchant-api", error="invalid_token", error_description="The access token expired at 2026-01-01T01:00:00.000Z (sandbox time is now 2026-01-01T01:00:00.000Z). Renew it before it expires: Request a new access token from POST /api/v2/auth/token."',
    );
    expect((await expired.json()).code).toBe("token_expired");
  });

  it("answers payment/init with 201 in-process", async () => {
    const res = await fetch(`${BASE}/api/v2/payment/init`, {
      method: "POST",
      headers: { authorization: "Bearer sandbox-payment-token", "content-type": "application/json" },
      body: JSON.stringify({ amount: 1999, currency: "EUR" }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ amount: 1999, currency: "EUR", status: "created" });
  });

  it("lets a base URL with a path prefix serve the API under it", async () => {
    const prefixed = setupServer(...createMswHandlers(await testSandbox(), { baseUrl: "https://gw.test/merchant/" }));
    server.close();
    prefixed.listen({ onUnhandledRequest: "error" });
    try {
      const res = await fetch("https://gw.test/merchant/__sandbox/health");
      expect(res.status).toBe(200);
    } finally {
      prefixed.close();
      server.listen({ onUnhandledRequest: "error" });
    }
  });

  it("regression: HEAD answered GET's body in-process; now GET's status and headers, no body", async () => {
    // msw hands the client whatever Response the handler builds, so the adapter leaves the body out
    // itself (RFC 9110 §9.3.2), as node:http does for the server.
    const { access_token } = await (await fetch(`${BASE}/api/v2/auth/token`, credentials)).json();
    const auth = { authorization: `Bearer ${access_token}` };
    for (const [path, headers] of [
      ["/.well-known/jwks.json", {}],
      ["/__sandbox/health", {}],
      ["/api/v2/payment/p_1", auth],
      ["/api/v2/payment/p_1", {}],
    ] as const) {
      const get = await fetch(`${BASE}${path}`, { headers });
      const head = await fetch(`${BASE}${path}`, { method: "HEAD", headers });
      expect({ path, status: head.status, headers: Object.fromEntries(head.headers), body: await head.text() }).toEqual({
        path,
        status: get.status,
        headers: Object.fromEntries(get.headers),
        body: "",
      });
      expect((await get.text()).length, path).toBeGreaterThan(0);
    }
  });

  it("streams the journal entries as they happen on GET /__sandbox/events (a ReadableStream body)", async () => {
    const stream = await openEventStream(`${BASE}/__sandbox/events`);
    expect([stream.status, stream.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
    expect((await fetch(`${BASE}/api/v2/payment/x`)).status).toBe(401);
    const [event] = await stream.next(1);
    stream.close();
    // The sandbox is shared by this file's tests: the event is the journal's newest entry.
    const newest = sandbox.journal.list().at(-1)!;
    expect(event).toEqual({ event: "request", id: newest.id, data: JSON.stringify(newest) });
  });
});

describe("the sandbox clock follows vitest's fake timers when it is not frozen", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("expires a token when fake time passes its exp", async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 0, 1), toFake: ["Date"] });
    const sandbox = await testSandbox();
    const server = setupServer(...createMswHandlers(sandbox, { baseUrl: BASE }));
    server.listen({ onUnhandledRequest: "error" });
    try {
      const { access_token, expires_in } = await (await fetch(`${BASE}/api/v2/auth/token`, credentials)).json();
      expect(expires_in).toBe(3600);
      const call = () => fetch(`${BASE}/api/v2/cashout/c_1`, { headers: { authorization: `Bearer ${access_token}` } });
      vi.setSystemTime(Date.UTC(2026, 0, 1, 0, 59, 59));
      expect((await call()).status).toBe(200);
      vi.setSystemTime(Date.UTC(2026, 0, 1, 1, 0, 0));
      expect((await (await call()).json()).code).toBe("token_expired");
    } finally {
      server.close();
    }
  });
});

describe("createMswHandlers options", () => {
  it("refuses a relative base URL, which msw would leave unmatched in Node", async () => {
    const sandbox = await testSandbox();
    expect(() => createMswHandlers(sandbox, { baseUrl: "api.merchant.test" })).toThrow(
      "baseUrl 'api.merchant.test' must be an absolute http(s) URL such as 'https://api.merchant.test' (or '/' for @mswjs/http-middleware)",
    );
  });
});
