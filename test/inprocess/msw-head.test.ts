import { setupServer } from "msw/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/app/sandbox.js";
import { createMswHandlers } from "../../src/adapters/msw.js";

/**
 * HEAD in-process: msw hands the client whatever Response the handler builds, so the adapter must
 * leave the body out itself (RFC 9110 §9.3.2), as node:http does for the server.
 */

const BASE = "https://api.merchant.test";

describe("HEAD through the msw handlers", () => {
  let sandbox: Sandbox;
  const server = setupServer();

  beforeAll(async () => {
    sandbox = await createSandbox({ frozenAt: "2026-01-01T00:00:00Z" });
    server.use(...createMswHandlers(sandbox, { baseUrl: BASE }));
    server.listen({ onUnhandledRequest: "error" });
  });
  afterAll(() => server.close());

  it("regression: HEAD answered GET's body in-process; now GET's status and headers, no body", async () => {
    const { access_token } = await (
      await fetch(`${BASE}/api/v2/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }),
      })
    ).json();
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
});
