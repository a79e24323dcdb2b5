import { setupServer } from "msw/node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createMswHandlers } from "../../src/adapters/msw.js";
import type { RequestLogEntry, Sandbox } from "../../src/app/sandbox.js";
import { testSandbox } from "../support/keys.js";
import { problem, serversPerTest, T0 } from "../support/server.js";

/**
 * A library scenario in-process: msw's setupServer with the sandbox's handlers plays
 * token-endpoint-outage exactly as the HTTP server does.
 */

const BASE = "https://api.merchant.test";
const outageCredentials = { api_key: "token-endpoint-outage-key", api_secret: "token-endpoint-outage-secret" };
const detail =
  "Service Unavailable: simulated by scenario 'token-endpoint-outage', rule 'outage'. Retry after 30 seconds, as the Retry-After header says.";
const outageProblem = problem(503, "Service Unavailable", "service_unavailable", detail, "/api/v2/auth/token", "temporarily_unavailable");

interface Answer {
  status: number;
  headers: Record<string, string>;
  /** The parsed JSON body (an object on every endpoint this file calls). */
  body: Record<string, unknown>;
}

/** Status, the headers that are not transport-specific, and the parsed body. */
async function answer(res: Response): Promise<Answer> {
  const headers = Object.fromEntries(
    [...res.headers].filter(([name]) => !["date", "connection", "keep-alive", "content-length", "transfer-encoding"].includes(name)),
  );
  return { status: res.status, headers, body: await res.json() };
}

const exchange = (base: string, credentials: object) =>
  fetch(`${base}/api/v2/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(credentials) });

describe("msw setupServer with createSandbox({ scenarios: ['token-endpoint-outage'] })", () => {
  // A fresh sandbox (and log) per test: the outage counts calls, so no test may see another's.
  let sandbox: Sandbox;
  let log: RequestLogEntry[];
  const server = setupServer();
  const start = serversPerTest();

  beforeAll(() => {
    server.listen({ onUnhandledRequest: "bypass" });
  });
  beforeEach(async () => {
    const entries: RequestLogEntry[] = [];
    log = entries;
    sandbox = await testSandbox({ scenarios: ["token-endpoint-outage"], frozenAt: T0, onRequest: (e) => entries.push(e) });
    server.resetHandlers(...createMswHandlers(sandbox, { baseUrl: BASE }));
  });
  afterAll(() => {
    server.close();
  });

  it("loads the scenario first, then the built-in default", () => {
    expect(sandbox.scenarios.map((s) => s.name)).toEqual(["token-endpoint-outage", "default"]);
  });

  it("answers the first two exchanges with 503, Retry-After 30 and x-sandbox-rule, then issues a token, as over HTTP", async () => {
    // The same scenario behind the real node:http server, for comparison. msw lets requests to
    // 127.0.0.1 through (they are not under BASE).
    const http = await start({ scenarios: ["token-endpoint-outage"] });
    const inProcess: Answer[] = [];
    const overHttp: Answer[] = [];
    for (let i = 0; i < 3; i++) {
      inProcess.push(await answer(await exchange(BASE, outageCredentials)));
      overHttp.push(await answer(await exchange(http.url, outageCredentials)));
    }
    for (const a of inProcess.slice(0, 2)) {
      expect(a).toEqual({
        status: 503,
        headers: {
          "cache-control": "no-store",
          "content-type": "application/problem+json",
          "retry-after": "30",
          "x-sandbox-rule": "token-endpoint-outage/outage",
        },
        body: outageProblem,
      });
    }
    expect(inProcess[2]!.status).toBe(200);
    expect(inProcess[2]!.headers["x-sandbox-rule"]).toBeUndefined();
    expect(inProcess[2]!.body).toMatchObject({ token_type: "Bearer", expires_in: 3600 });

    // Same answers in-process and over HTTP (the tokens differ only by their signing key).
    expect(inProcess.slice(0, 2)).toEqual(overHttp.slice(0, 2));
    expect({ ...inProcess[2], body: { ...inProcess[2]!.body, access_token: "…" } }).toEqual({
      ...overHttp[2],
      body: { ...overHttp[2]!.body, access_token: "…" },
    });
  });

  it("records the rule in the request log entries it shaped", async () => {
    for (let i = 0; i < 3; i++) await exchange(BASE, outageCredentials);
    expect(log.map((e) => [e.status, e.scenario, e.merchant, e.rules])).toEqual([
      [503, "token-endpoint-outage", "m_token_endpoint_outage", ["token-endpoint-outage/outage"]],
      [503, "token-endpoint-outage", "m_token_endpoint_outage", ["token-endpoint-outage/outage"]],
      [200, "token-endpoint-outage", "m_token_endpoint_outage", undefined],
    ]);
  });

  it("leaves the default merchant alone", async () => {
    const res = await exchange(BASE, { api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-sandbox-rule")).toBeNull();
  });

  it("keeps the outage's call count per sandbox: a new sandbox starts the outage again", async () => {
    const fresh = await testSandbox({ scenarios: ["token-endpoint-outage"], frozenAt: T0 });
    const other = setupServer(...createMswHandlers(fresh, { baseUrl: "https://other.merchant.test" }));
    server.close();
    other.listen({ onUnhandledRequest: "error" });
    try {
      expect((await exchange("https://other.merchant.test", outageCredentials)).status).toBe(503);
    } finally {
      other.close();
      server.listen({ onUnhandledRequest: "bypass" });
    }
  });
});
