import type { Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxMiddleware } from "../../src/adapters/express.js";
import { createSandbox, type Sandbox } from "../../src/app/sandbox.js";
import { DEFAULT_MERCHANT } from "../../src/core/merchants.js";

/**
 * merchant-sandbox/express (issue 16): the sandbox mounted in a real express app on port 0, under a
 * prefix or at the root, beside the app's own routes.
 */

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listen(app: express.Express): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The app a team would write: its own routes before and after the sandbox. */
function appWith(mount: (app: express.Express) => void): express.Express {
  const app = express();
  app.get("/health", (_req, res) => {
    res.json({ app: "health" });
  });
  mount(app);
  app.get("/mine", (_req, res) => {
    res.json({ app: "mine" });
  });
  app.get("/api/orders", (_req, res) => {
    res.json({ app: "orders" });
  });
  return app;
}

const frozen = () => createSandbox({ frozenAt: "2026-01-01T00:00:00Z" });

async function exchange(base: string): Promise<Response> {
  return fetch(`${base}/api/v2/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ api_key: DEFAULT_MERCHANT.apiKey, api_secret: DEFAULT_MERCHANT.apiSecret }),
  });
}

async function tokenAndProtectedCall(base: string): Promise<void> {
  const token = await exchange(base);
  expect(token.status).toBe(200);
  expect(token.headers.get("cache-control")).toBe("no-store");
  const issued = (await token.json()) as { access_token: string; token_type: string; expires_in: number };
  expect(issued.token_type).toBe("Bearer");
  expect(issued.expires_in).toBe(3600);
  const paid = await fetch(`${base}/api/v2/payment/orders`, { headers: { authorization: `Bearer ${issued.access_token}` } });
  expect(paid.status).toBe(200);
  expect(await paid.json()).toMatchObject({
    sandbox: true,
    merchant_id: DEFAULT_MERCHANT.id,
    operation: "GET /api/v2/payment/orders",
    scope: "payment",
  });
  const refused = await fetch(`${base}/api/v2/payment/orders`);
  expect(refused.status).toBe(401);
  expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="merchant-api"');
  expect(((await refused.json()) as { code: string }).code).toBe("credentials_missing");
}

describe("sandboxMiddleware(sandbox) in an express app", () => {
  it('under app.use("/merchant", …): the token exchange and a protected call work, and the app keeps its own routes', async () => {
    const sandbox = await frozen();
    const root = await listen(appWith((app) => app.use("/merchant", sandboxMiddleware(sandbox))));

    await tokenAndProtectedCall(`${root}/merchant`);
    const mine = await fetch(`${root}/mine`);
    expect(mine.status).toBe(200);
    expect(await mine.json()).toEqual({ app: "mine" });
    expect(await (await fetch(`${root}/health`)).json()).toEqual({ app: "health" });
    // The control plane is under the prefix too.
    const health = await fetch(`${root}/merchant/__sandbox/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe("ok");
    // A path under the prefix that the sandbox does not serve is the app's: express's own 404.
    const other = await fetch(`${root}/merchant/orders`);
    expect(other.status).toBe(404);
    expect(other.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await other.text()).toContain("Cannot GET /merchant/orders");
    expect(sandbox.journal.list().map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      "POST /api/v2/auth/token 200",
      "GET /api/v2/payment/orders 200",
      "GET /api/v2/payment/orders 401",
    ]);
  });

  it("regression: a route with one trailing slash too many is the sandbox's (its 404 names the path meant), not the app's", async () => {
    const sandbox = await frozen();
    const root = await listen(appWith((app) => app.use("/merchant", sandboxMiddleware(sandbox))));

    const slashed = await fetch(`${root}/merchant/api/v2/auth/token/`, { method: "POST" });
    expect(slashed.status).toBe(404);
    expect(slashed.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await slashed.json()) as { code: string; detail: string };
    expect(problem.code).toBe("not_found");
    expect(problem.detail).toContain("/api/v2/auth/token");
  });

  it("regression: a request http-middleware cannot read (a Host with a space) goes to the app's error handler; the app keeps serving", async () => {
    const sandbox = await frozen();
    const app = appWith((a) => a.use("/merchant", sandboxMiddleware(sandbox)));
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(400).json({ app: "error", name: error.name });
    });
    const root = await listen(app);
    const { port } = new URL(root);
    const raw = await new Promise<string>((resolve, reject) => {
      let text = "";
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.end("GET /merchant/__sandbox/health HTTP/1.1\r\nHost: exa mple\r\nConnection: close\r\n\r\n");
      });
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => (text += chunk));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(raw.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(raw.endsWith('{"app":"error","name":"TypeError"}')).toBe(true);
    const health = await fetch(`${root}/merchant/__sandbox/health`);
    expect(health.status).toBe(200);
  });

  it("at the root: the sandbox's paths are the sandbox's, every other route (/mine, /api/orders) the app's", async () => {
    const sandbox = await frozen();
    const root = await listen(appWith((app) => app.use(sandboxMiddleware(sandbox))));

    await tokenAndProtectedCall(root);
    expect(await (await fetch(`${root}/mine`)).json()).toEqual({ app: "mine" });
    expect(await (await fetch(`${root}/api/orders`)).json()).toEqual({ app: "orders" });
  });

  it("with fallthrough: false every request under the prefix is the sandbox's: an unknown path gets its 404 with a hint", async () => {
    const sandbox = await frozen();
    const root = await listen(appWith((app) => app.use("/merchant", sandboxMiddleware(sandbox, { fallthrough: false }))));

    const wrong = await fetch(`${root}/merchant/api/v1/auth/token`, { method: "POST" });
    expect(wrong.status).toBe(404);
    expect(wrong.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await wrong.json()) as { code: string; detail: string };
    expect(problem.code).toBe("not_found");
    expect(problem.detail).toContain("/api/v2/auth/token");
    expect(await (await fetch(`${root}/mine`)).json()).toEqual({ app: "mine" });
  });

  it("with a session: every request it answers is that session's, with the session's credentials", async () => {
    const sandbox: Sandbox = await frozen();
    const session = await sandbox.sessions.create("default");
    const { merchant } = sandbox.sessions.info(session);
    const root = await listen(appWith((app) => app.use("/merchant", sandboxMiddleware(sandbox, { session: session.id }))));

    const token = await fetch(`${root}/merchant/api/v2/auth/token`, {
      method: "POST",
      headers: { "x-api-key": merchant.api_key, "x-api-secret": merchant.api_secret },
    });
    expect(token.status).toBe(200);
    const published = await exchange(`${root}/merchant`);
    expect(published.status).toBe(401);
    expect(((await published.json()) as { code: string }).code).toBe("session_credentials_mismatch");
    expect(sandbox.journal.list({ session: session.id })).toHaveLength(2);
  });

  it("refuses a session option that is not a session id, saying what one looks like", async () => {
    const sandbox = await frozen();
    expect(() => sandboxMiddleware(sandbox, { session: "my-session" })).toThrow(
      "session 'my-session' is not a session id: pass the id of sandbox.sessions.create(), e.g. 'ses_0123456789abcdef'",
    );
  });
});
