import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxMiddleware } from "../../src/adapters/express.js";
import { startServer } from "../../src/adapters/node-http.js";
import type { Sandbox } from "../../src/app/sandbox.js";
import { testSandbox } from "../support/keys.js";
import { DEFAULT_MERCHANT } from "../../src/core/merchants.js";
import { openEventStream } from "../support/event-stream.js";

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

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** A request's head as bytes on the wire: the Host line exactly as given (undefined: none). */
function request(method: string, path: string, host: string | undefined, more: string[] = []): string {
  return [`${method} ${path} HTTP/1.1`, ...(host === undefined ? [] : [host]), ...more, "Connection: close", "", ""].join("\r\n");
}

/** Writes a request on a raw socket (no client tidies its Host) and resolves with all the answer. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(text));
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => (answer += c));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

function parsed(raw: string): { status: number; headers: Headers; body: string } {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split).split("\r\n");
  const headers = new Headers();
  for (const line of head.slice(1)) headers.append(line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim());
  return { status: Number(head[0]!.split(" ")[1]), headers, body: raw.slice(split + 4) };
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

const frozen = () => testSandbox({ frozenAt: "2026-01-01T00:00:00Z" });

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

  it("no 500 on bad input: a Host no URL parser takes (`a b`, `[::1`, `%`, empty) or none at all gets the standalone server's problem+json, byte for byte", async () => {
    const sandbox = await frozen();
    const app = appWith((a) => a.use("/merchant", sandboxMiddleware(sandbox)));
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(599).json({ app: "error", name: error.name });
    });
    const port = portOf(await listen(app));
    const standalone = await startServer(await frozen(), { port: 0 });
    try {
      for (const host of ["Host: a b", "Host: [::1", "Host: %", "Host: ", "Host:"]) {
        for (const path of ["/__sandbox/sessions", "/api/v2/payment/orders"]) {
          const mounted = parsed(await rawExchange(port, request("GET", `/merchant${path}`, host)));
          const server = parsed(await rawExchange(standalone.port, request("GET", path, host)));
          const what = `${host ?? "no Host"} ${path}`;
          expect(mounted.status, what).toBe(server.status);
          expect(mounted.headers.get("content-type"), what).toBe("application/problem+json");
          expect(mounted.body, what).toBe(server.body);
        }
      }
      const spaced = parsed(await rawExchange(port, request("GET", "/merchant/__sandbox/sessions", "Host: a b")));
      expect([spaced.status, JSON.parse(spaced.body).code]).toEqual([403, "host_not_allowed"]);
      const api = parsed(await rawExchange(port, request("GET", "/merchant/api/v2/payment/orders", "Host: %")));
      expect([api.status, JSON.parse(api.body).code]).toEqual([401, "credentials_missing"]);
    } finally {
      await standalone.close();
    }
    expect((await fetch(`http://127.0.0.1:${port}/merchant/__sandbox/health`)).status).toBe(200);

    // No Host at all: node's server refuses it before express (an empty 400) unless told not to;
    // then the middleware answers as the standalone server does.
    const lenient = createServer({ requireHostHeader: false }, app);
    await new Promise<void>((resolve) => lenient.listen(0, "127.0.0.1", resolve));
    servers.push(lenient);
    const missing = parsed(
      await rawExchange(
        portOf(`http://127.0.0.1:${(lenient.address() as AddressInfo).port}`),
        request("GET", "/merchant/__sandbox/sessions", undefined),
      ),
    );
    expect([missing.status, missing.headers.get("content-type"), JSON.parse(missing.body).code]).toEqual([
      400,
      "application/problem+json",
      "host_missing",
    ]);
  });

  it("bounded memory: a body over the limit is refused 413 while it uploads; the app reads about the limit, not the body", async () => {
    const limit = 1024 * 1024;
    const total = 64 * 1024 * 1024;
    const sandbox = await testSandbox({ frozenAt: "2026-01-01T00:00:00Z", maxBodyBytes: limit });
    const app = express();
    app.use("/merchant", sandboxMiddleware(sandbox));
    const port = portOf(await listen(app));
    const accepted: Socket[] = [];
    servers.at(-1)!.on("connection", (s: Socket) => accepted.push(s));
    const before = process.memoryUsage().arrayBuffers;

    const chunk = Buffer.alloc(64 * 1024, "x");
    const outcome = await new Promise<{ sent: number; answer: string; grown: number }>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let sent = 0;
      let answer = "";
      let grown = 0;
      const pump = () => {
        while (sent < total && answer === "") {
          sent += chunk.length;
          if (!socket.write(chunk)) return;
        }
      };
      socket.on("connect", () => {
        socket.write(
          request("POST", "/merchant/api/v2/auth/token", "Host: 127.0.0.1", [`Content-Type: application/json`, `Content-Length: ${total}`]),
        );
        pump();
      });
      socket.on("drain", pump);
      socket.on("data", (c: Buffer) => {
        if (answer === "") grown = process.memoryUsage().arrayBuffers - before;
        answer += c.toString("utf8");
      });
      // The server closes the connection after its answer; writes still on their way then fail.
      socket.on("error", (e) => (answer === "" ? reject(e) : undefined));
      socket.on("close", () => resolve({ sent, answer, grown }));
    });
    const answer = parsed(outcome.answer);
    expect(answer.status).toBe(413);
    expect(answer.headers.get("connection")).toBe("close");
    expect(JSON.parse(answer.body)).toEqual({
      type: "urn:merchant-sandbox:problem:payload_too_large",
      title: "Content Too Large",
      status: 413,
      detail: `The request body is larger than ${limit} bytes. Send only the fields the endpoint expects.`,
      code: "payload_too_large",
      error: "payload_too_large",
      error_description: `The request body is larger than ${limit} bytes. Send only the fields the endpoint expects.`,
      instance: "/api/v2/auth/token",
    });
    // The answer came while the upload was far from done, and the app read little past the limit
    // (what the socket buffers held), never the 64 MiB: buffered whole, the app held 64 MiB and more.
    expect(outcome.sent).toBeLessThan(total / 2);
    expect(accepted.reduce((n, s) => n + s.bytesRead, 0)).toBeLessThan(16 * 1024 * 1024);
    expect(outcome.grown).toBeLessThan(32 * 1024 * 1024);
    expect(sandbox.journal.list().map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual(["POST /api/v2/auth/token 413"]);
  });

  it("bounded slots: an event stream the client aborts frees its place (maxEventSubscribers 2: three rounds of two opened and aborted, then two open and a third is refused 429)", async () => {
    const sandbox = await testSandbox({ frozenAt: "2026-01-01T00:00:00Z", maxEventSubscribers: 2 });
    const root = await listen(appWith((a) => a.use("/merchant", sandboxMiddleware(sandbox))));
    const closed: Array<Promise<unknown>> = [];
    servers.at(-1)!.on("connection", (s: Socket) => closed.push(new Promise((resolve) => s.once("close", resolve))));
    for (let round = 0; round < 3; round++) {
      const streams = [await openEventStream(`${root}/merchant/__sandbox/events`), await openEventStream(`${root}/merchant/__sandbox/events`)];
      expect(streams.map((s) => s.status)).toEqual([200, 200]);
      for (const s of streams) s.close();
      // Both connections closed on the server's side: their streams must have let go of their places.
      await Promise.all(closed.splice(0));
    }
    const third = [await openEventStream(`${root}/merchant/__sandbox/events`), await openEventStream(`${root}/merchant/__sandbox/events`)];
    const refused = await openEventStream(`${root}/merchant/__sandbox/events`);
    expect([...third, refused].map((s) => s.status)).toEqual([200, 200, 429]);
    expect(JSON.parse(await refused.text()).code).toBe("too_many_subscribers");
    for (const s of third) s.close();
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
