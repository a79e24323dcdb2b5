import express from "express";
import { createMiddleware } from "@mswjs/http-middleware";
import { exportPKCS8, generateKeyPair } from "jose";
import { setupServer } from "msw/node";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxOptions } from "../../src/app/sandbox.js";
import { testSandbox } from "../support/keys.js";
import { startServer, type RunningServer } from "../../src/adapters/node-http.js";
import { createMswHandlers } from "../../src/adapters/msw.js";
import { T0, requestWithRepeatedHeaders, type Reply } from "../support/server.js";

/**
 * Parity: one table of requests through all three adapters (node:http server, msw setupServer
 * in-process, express + @mswjs/http-middleware) must give identical statuses, headers and bodies.
 * Each adapter gets its own sandbox with the same key, seed and frozen clock, so even the JWTs
 * and generated ids are identical. Only transport headers, which belong to each HTTP stack
 * (date, connection, framing), are left out of the comparison.
 */

const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length", "x-powered-by"]);

interface Step {
  name: string;
  method: string;
  path: string;
  /** A header given as several values is sent as that many header lines. */
  headers?: Record<string, string | string[]>;
  body?: string;
}

const json = { "content-type": "application/json" };
const CREDENTIALS = JSON.stringify({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" });

/**
 * The repeated-header steps, and the step that sends only their first header: what
 * @mswjs/http-middleware answers instead, since node's `req.headers` drops the repeat.
 */
const REPEATED: Record<string, string> = {
  "payment with two Authorization headers": "payment with token",
  "cashout with two different Authorization headers": "cashout with token",
};

/** `{token}` in a header is replaced by the access token the first step returned. */
const TABLE: Step[] = [
  { name: "token exchange, body", method: "POST", path: "/api/v2/auth/token", headers: json, body: CREDENTIALS },
  {
    name: "token exchange, headers",
    method: "POST",
    path: "/api/v2/auth/token",
    headers: { "x-api-key": "sandbox-api-key", "x-api-secret": "sandbox-api-secret" },
  },
  { name: "token: secret missing", method: "POST", path: "/api/v2/auth/token", headers: json, body: '{"api_key":"sandbox-api-key"}' },
  {
    name: "token: wrong secret",
    method: "POST",
    path: "/api/v2/auth/token",
    headers: json,
    body: '{"api_key":"sandbox-api-key","api_secret":"nope"}',
  },
  { name: "token: conflict", method: "POST", path: "/api/v2/auth/token", headers: { ...json, "x-api-key": "other" }, body: CREDENTIALS },
  { name: "token: malformed JSON", method: "POST", path: "/api/v2/auth/token", headers: json, body: '{"api_key":' },
  {
    name: "token: form body",
    method: "POST",
    path: "/api/v2/auth/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "api_key=a",
  },
  { name: "token: GET", method: "GET", path: "/api/v2/auth/token" },
  { name: "payment with token", method: "GET", path: "/api/v2/payment/anything", headers: { authorization: "Bearer {token}" } },
  {
    name: "payment POST with token",
    method: "POST",
    path: "/api/v2/payment/refund",
    headers: { authorization: "Bearer {token}", ...json },
    body: "{}",
  },
  { name: "cashout with token", method: "GET", path: "/api/v2/cashout/list", headers: { authorization: "Bearer {token}" } },
  { name: "payment without credentials", method: "GET", path: "/api/v2/payment/anything" },
  { name: "payment with Basic", method: "GET", path: "/api/v2/payment/anything", headers: { authorization: "Basic abc" } },
  { name: "payment with token in query", method: "GET", path: "/api/v2/payment/anything?access_token=abc" },
  { name: "payment with garbage token", method: "GET", path: "/api/v2/payment/anything", headers: { authorization: "Bearer abc" } },
  { name: "payment with payment token", method: "GET", path: "/api/v2/payment/anything", headers: { authorization: "Bearer sandbox-payment-token" } },
  {
    name: "payment/init",
    method: "POST",
    path: "/api/v2/payment/init",
    headers: { authorization: "Bearer sandbox-payment-token", "content-type": "application/x-www-form-urlencoded" },
    body: "{}",
  },
  { name: "payment/init with JWT", method: "POST", path: "/api/v2/payment/init", headers: { authorization: "Bearer {token}" } },
  {
    name: "login_check",
    method: "POST",
    path: "/api/login_check",
    headers: json,
    body: '{"username":"merchant@sandbox.test","password":"sandbox-password"}',
  },
  {
    name: "login_check bad password",
    method: "POST",
    path: "/api/login_check",
    headers: json,
    body: '{"username":"merchant@sandbox.test","password":"x"}',
  },
  // Two Authorization lines reach node:http as two headers, but msw setupServer sees one value:
  // fetch's Headers joins repeats into "Bearer a, Bearer b". The msw adapter splits a joined pair
  // of credentials back (an Authorization value holds one credential), so both refuse the repeat.
  // Behind express, @mswjs/http-middleware builds its Request from node's `req.headers`, which
  // keeps only the first Authorization line: the second is gone before the adapter runs, so that
  // adapter cannot refuse it and answers as if only the first was sent (see REPEATED below).
  {
    name: "payment with two Authorization headers",
    method: "GET",
    path: "/api/v2/payment/anything",
    headers: { authorization: ["Bearer {token}", "Bearer {token}"] },
  },
  {
    name: "cashout with two different Authorization headers",
    method: "GET",
    path: "/api/v2/cashout/list",
    headers: { authorization: ["Bearer {token}", "Basic abc"] },
  },
  { name: "jwks", method: "GET", path: "/.well-known/jwks.json" },
  { name: "health", method: "GET", path: "/__sandbox/health" },
  { name: "unknown path", method: "GET", path: "/nope" },
];

interface Observed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

type Send = (step: Step, token: string) => Promise<Observed>;

async function observe(res: Response): Promise<Observed> {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!TRANSPORT_HEADERS.has(name)) headers[name] = value;
  });
  return { status: res.status, headers, body: await res.text() };
}

function sender(base: string): Send {
  return async (step, token) => {
    const lines = Object.entries(step.headers ?? {}).flatMap(([k, v]) =>
      (Array.isArray(v) ? v : [v]).map((one) => [k, one.replace("{token}", token)]),
    );
    const repeated = lines.length !== Object.keys(step.headers ?? {}).length;
    // fetch would join repeated lines into one before they leave this process; a real server gets
    // them through node:http as separate lines. In process, fetch's Headers is what a client has.
    if (repeated && base.startsWith("http://")) return observeReply(await requestWithRepeatedHeaders(base, step.path, groupLines(lines), step));
    const headers = new Headers();
    for (const [name, value] of lines) headers.append(name!, value!);
    return observe(await fetch(base + step.path, { method: step.method, headers, body: step.body }));
  };
}

function groupLines(lines: string[][]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of lines) {
    out[name!] ??= [];
    out[name!]!.push(value!);
  }
  return out;
}

function observeReply(r: Reply): Observed {
  const headers: Record<string, string> = {};
  r.headers.forEach((value, name) => {
    if (!TRANSPORT_HEADERS.has(name)) headers[name] = value;
  });
  return { status: r.status, headers, body: r.text };
}

/** `tokenOf`: where the token exchange's answer holds the token (a response profile moves it). */
// biome-ignore lint/suspicious/noExplicitAny: the parsed token answer, whose shape is the profile's
async function runTable(send: Send, tokenOf: (answer: any) => string = (answer) => answer.access_token): Promise<Observed[]> {
  const out: Observed[] = [];
  let token = "";
  for (const step of TABLE) {
    const o = await send(step, token);
    if (!token && step.path === "/api/v2/auth/token" && o.status === 200) token = tokenOf(JSON.parse(o.body));
    out.push(o);
  }
  return out;
}

describe("adapter parity: node:http, msw setupServer and @mswjs/http-middleware answer identically", () => {
  let options: SandboxOptions;
  const results: Record<string, Observed[]> = {};
  let node: RunningServer;
  let expressServer: Server;
  const msw = setupServer();

  beforeAll(async () => {
    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    // seededTokenIds: jti from the seed alone, so the three sandboxes' tokens are identical too.
    options = { signingKey: await exportPKCS8(privateKey), frozenAt: T0, seed: 42, seededTokenIds: true };

    node = await startServer(await testSandbox(options), { port: 0 });
    results.node = await runTable(sender(node.url));

    const app = express();
    // http-middleware is CommonJS and sees msw's CommonJS typings: the handler types differ only by that.
    const handlers = createMswHandlers(await testSandbox(options), { baseUrl: "/" }) as unknown as Parameters<typeof createMiddleware>;
    app.use(createMiddleware(...handlers));
    expressServer = await new Promise<Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    results.middleware = await runTable(sender(`http://127.0.0.1:${(expressServer.address() as AddressInfo).port}`));

    msw.use(...createMswHandlers(await testSandbox(options), { baseUrl: "https://api.merchant.test" }));
    msw.listen({ onUnhandledRequest: "error" });
    results.msw = await runTable(sender("https://api.merchant.test"));
    msw.close();
  });

  afterAll(async () => {
    await node?.close();
    await new Promise((resolve) => expressServer?.close(resolve));
  });

  it("runs the whole table through each adapter", () => {
    for (const name of ["node", "middleware", "msw"]) expect(results[name]).toHaveLength(TABLE.length);
    // The table exercises success and refusal paths alike.
    expect(results.node!.map((o) => o.status)).toEqual([
      200, 200, 400, 401, 400, 400, 415, 405, 200, 200, 200, 401, 400, 400, 401, 401, 201, 401, 200, 401, 400, 400, 200, 200, 404,
    ]);
  });

  it("two Authorization headers are refused as repeated by node:http and msw setupServer (not as one malformed value)", () => {
    for (const name of Object.keys(REPEATED)) {
      const i = TABLE.findIndex((s) => s.name === name);
      for (const adapter of ["node", "msw"]) {
        expect(JSON.parse(results[adapter]![i]!.body).code, `${adapter}: ${name}`).toBe("authorization_header_repeated");
      }
    }
  });

  for (const [i, step] of TABLE.entries()) {
    it(`${step.name}: ${step.method} ${step.path}`, () => {
      expect(results.msw![i]).toEqual(results.node![i]);
      const firstOnly = REPEATED[step.name];
      if (firstOnly === undefined) expect(results.middleware![i]).toEqual(results.node![i]);
      // A known limit of @mswjs/http-middleware (node's req.headers keeps one Authorization): it
      // answers exactly as to the first header alone.
      else expect(results.middleware![i]).toEqual(results.node![TABLE.findIndex((s) => s.name === firstOnly)]);
    });
  }
});

describe("adapter parity under a response profile (envelope): node:http and msw setupServer answer identically", () => {
  const results: Record<string, Observed[]> = {};
  let node: RunningServer;
  const msw = setupServer();
  const tokenOf = (answer: { data: { access_token: string } }) => answer.data.access_token;

  beforeAll(async () => {
    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    const options: SandboxOptions = { signingKey: await exportPKCS8(privateKey), frozenAt: T0, seed: 42, seededTokenIds: true, profile: "envelope" };
    node = await startServer(await testSandbox(options), { port: 0 });
    results.node = await runTable(sender(node.url), tokenOf);
    msw.use(...createMswHandlers(await testSandbox(options), { baseUrl: "https://api.merchant.test" }));
    msw.listen({ onUnhandledRequest: "error" });
    results.msw = await runTable(sender("https://api.merchant.test"), tokenOf);
    msw.close();
  });

  afterAll(async () => {
    await node?.close();
  });

  it("makes the same decisions as without a profile, and answers in the profile's shapes", () => {
    expect(results.node!.map((o) => o.status)).toEqual([
      200, 200, 400, 401, 400, 400, 415, 405, 200, 200, 200, 401, 400, 400, 401, 401, 201, 401, 200, 401, 400, 400, 200, 200, 404,
    ]);
    expect(Object.keys(JSON.parse(results.node![0]!.body))).toEqual(["status", "code", "message", "data"]);
    expect(JSON.parse(results.node![3]!.body)).toMatchObject({ status: "error", code: 401, data: { error_code: "wrong_api_secret" } });
    expect(results.node![3]!.headers["content-type"]).toBe("application/json");
  });

  for (const [i, step] of TABLE.entries()) {
    it(`${step.name}: ${step.method} ${step.path}`, () => {
      expect(results.msw![i]).toEqual(results.node![i]);
    });
  }
});
