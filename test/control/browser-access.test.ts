import { setupServer } from "msw/node";
import { describe, expect, it } from "vitest";
import { createMswHandlers } from "../../src/adapters/msw.js";
import { testSandbox } from "../support/keys.js";
import { expectProblem } from "../support/expect.js";
import {
  DEFAULT_KEY,
  DEFAULT_SECRET,
  postEmpty,
  postJson,
  problem,
  requestWithRepeatedHeaders,
  T0,
  type Reply,
  type TestServer,
  serversPerTest,
} from "../support/server.js";

/**
 * The control plane keeps web pages out (src/control/access.ts): a page open in the developer's
 * browser must not reset the sandbox or read its sessions, neither by a plain cross-origin POST
 * nor through DNS rebinding. Scripts, tests, docker and CI keep working. Issue 10 §3.
 */

/** A real server on port 0 for the current test, closed after it. */
const server = serversPerTest();

const FIX =
  "a page open in your browser could otherwise reset the sandbox or read every session. Call the control plane from a script, a test or CI (curl, fetch in Node), not from a web page.";

/** `127.0.0.1:<port>`: the Host fetch sends to a test server. */
const hostOf = (t: TestServer) => t.url.slice("http://".length);

function crossSite(detail: string, path: string) {
  return problem(403, "Forbidden", "cross_site_request", detail, path, "access_denied");
}
function originRefused(t: TestServer, origin: string, path: string) {
  return crossSite(
    `The control plane refuses requests from web pages: Origin '${origin}' is not the sandbox's own (this sandbox is ${t.url}); ${FIX}`,
    path,
  );
}
function hostRefused(host: string, name: string, path: string) {
  return problem(
    403,
    "Forbidden",
    "host_not_allowed",
    `The control plane does not answer to Host '${host}': a web page can point a name it owns at this machine (DNS rebinding) and read every session's secrets through it. Call the sandbox by localhost, an IP address or a single-label name (a docker or CI service name such as 'sandbox'), or allow this name with --allowed-hosts ${name} (MERCHANT_SANDBOX_ALLOWED_HOSTS, createSandbox({ allowedHosts })).`,
    path,
    "access_denied",
  );
}
function jsonRequired(t: TestServer, got: string, path: string) {
  return problem(
    415,
    "Unsupported Media Type",
    "control_json_required",
    `POST on the control plane needs 'Content-Type: application/json', even with an empty body (the request has ${got}): that keeps web pages, which can send forms and text unasked, from changing the sandbox. With curl: curl -X POST -H 'content-type: application/json' ${t.url}${path}`,
    path,
    "unsupported_media_type",
  );
}

/** A session, and proof it is still alive: its listing and its credentials' token exchange. */
async function createSession(t: TestServer): Promise<{ id: string; api_key: string; api_secret: string }> {
  const r = await t.call("/__sandbox/sessions", postJson({}));
  expect(r.status).toBe(201);
  return { id: r.json.id, api_key: r.json.merchant.api_key, api_secret: r.json.merchant.api_secret };
}
async function expectAlive(t: TestServer, s: { id: string; api_key: string; api_secret: string }): Promise<void> {
  expect((await t.call("/__sandbox/sessions")).json.sessions.map((x: { id: string }) => x.id)).toEqual([s.id]);
  expect((await t.call("/api/v2/auth/token", postJson({ api_key: s.api_key, api_secret: s.api_secret }))).status).toBe(200);
}

/** A request with any Host (fetch always sends the URL's own). */
function withHost(
  t: TestServer,
  path: string,
  host: string,
  headers: Record<string, string> = {},
  init: { method?: string; body?: string } = {},
): Promise<Reply> {
  return requestWithRepeatedHeaders(t.url, path, { host, ...headers }, init);
}

describe("a web page on another site", () => {
  it("regression: POST /__sandbox/reset with Origin: https://evil.example and no body is refused (403 cross_site_request), every session untouched", async () => {
    const t = await server();
    const s = await createSession(t);
    const r = await t.call("/__sandbox/reset", { method: "POST", headers: { origin: "https://evil.example" } });
    expectProblem(r, originRefused(t, "https://evil.example", "/__sandbox/reset"));
    await expectAlive(t, s);
  });

  it("regression: Sec-Fetch-Site: cross-site is refused, and the answer holds no session secret", async () => {
    const t = await server();
    const s = await createSession(t);
    const r = await t.call("/__sandbox/sessions", { headers: { "sec-fetch-site": "cross-site" } });
    expectProblem(
      r,
      crossSite(`The control plane refuses requests from web pages of another site (Sec-Fetch-Site: cross-site): ${FIX}`, "/__sandbox/sessions"),
    );
    expect(r.text).not.toContain(s.api_secret);
    // Even with the sandbox's own Origin beside it.
    expect((await t.call("/__sandbox/reset", postEmpty({ "sec-fetch-site": "cross-site", origin: t.url }))).json.code).toBe("cross_site_request");
    await expectAlive(t, s);
  });

  it("regression: Origin: null (a sandboxed frame, a file: page) counts as cross-site", async () => {
    const t = await server();
    const r = await t.call("/__sandbox/clock", postJson({ advance: "1h" }, { origin: "null" }));
    expectProblem(r, originRefused(t, "null", "/__sandbox/clock"));
    expect((await t.call("/__sandbox/clock")).json).toEqual({ now: new Date(T0).toISOString(), frozen: true });
  });

  it("refuses another port, another scheme's host, a look-alike name; before the admin token and the method are looked at", async () => {
    const t = await server({ adminToken: "a-long-enough-admin-token" });
    for (const origin of ["http://127.0.0.1:1", "http://localhost", `${t.url}.evil.example`, "chrome-extension://abc"]) {
      expectProblem(await t.call("/__sandbox/sessions", { headers: { origin } }), originRefused(t, origin, "/__sandbox/sessions"));
    }
    // A page learns nothing from a 401 or a 405 either.
    expectProblem(
      await t.call("/__sandbox/reset", { method: "PUT", headers: { origin: "https://evil.example" } }),
      originRefused(t, "https://evil.example", "/__sandbox/reset"),
    );
  });

  it("lets the sandbox's own Origin through (http:// or https:// + Host), and Sec-Fetch-Site same-origin or none", async () => {
    const t = await server();
    const own: Array<Record<string, string>> = [
      { origin: t.url },
      { origin: `https://${hostOf(t)}` },
      { "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "none" },
    ];
    for (const headers of own) {
      expect((await t.call("/__sandbox/reset", postEmpty(headers))).status, JSON.stringify(headers)).toBe(200);
    }
  });

  it("grants no CORS: no Access-Control-* header on any answer, a preflight included", async () => {
    const t = await server();
    const answers = [
      await t.call("/__sandbox/reset", { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } }),
      await t.call("/__sandbox/reset", { method: "OPTIONS" }),
      await t.call("/__sandbox/sessions", { headers: { origin: "https://evil.example" } }),
      await t.call("/__sandbox/sessions"),
      await t.call("/__sandbox/health", { headers: { origin: "https://evil.example" } }),
    ];
    expect(answers.map((r) => r.status)).toEqual([403, 405, 403, 200, 200]);
    for (const r of answers) expect([...r.headers.keys()].filter((k) => k.startsWith("access-control-"))).toEqual([]);
  });
});

describe("a POST not declared as JSON", () => {
  it("regression: POST /__sandbox/reset without Content-Type is refused (415 control_json_required) with the curl fix, sessions untouched", async () => {
    const t = await server();
    const s = await createSession(t);
    expectProblem(await t.call("/__sandbox/reset", { method: "POST" }), jsonRequired(t, "no Content-Type", "/__sandbox/reset"));
    await expectAlive(t, s);
  });

  it.each([
    ["/__sandbox/sessions", "{}"],
    ["/__sandbox/sessions/$ID/clock", '{"advance":"1h"}'],
    ["/__sandbox/sessions/$ID/reset", ""],
    ["/__sandbox/clock", '{"advance":"1h"}'],
    ["/__sandbox/reset", ""],
    ["/__sandbox/tokens", "{}"],
    ["/__sandbox/scan", '{"text":"x"}'],
  ])("POST %s as a form, text/plain or with no type: 415, nothing changed", async (template, body) => {
    const t = await server();
    const s = await createSession(t);
    const path = template.replace("$ID", s.id);
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "text/plain; application/json"]) {
      expectProblem(await t.call(path, { method: "POST", headers: { "content-type": type }, body }), jsonRequired(t, `Content-Type: ${type}`, path));
    }
    // What fetch sends for a string body with no type given.
    const bare = body === "" ? { method: "POST" } : { method: "POST", body };
    expectProblem(await t.call(path, bare), jsonRequired(t, body === "" ? "no Content-Type" : "Content-Type: text/plain;charset=UTF-8", path));
    await expectAlive(t, s);
    expect((await t.call("/__sandbox/clock")).json.now).toBe(new Date(T0).toISOString());
  });

  it("keeps an empty POST declared as JSON working (reset, session reset), with parameters; DELETE needs no type (browsers preflight it)", async () => {
    const t = await server();
    const s = await createSession(t);
    expect((await t.call(`/__sandbox/sessions/${s.id}/reset`, postEmpty())).status).toBe(200);
    const charset = await t.call("/__sandbox/reset", { method: "POST", headers: { "content-type": "Application/JSON; charset=utf-8" } });
    expect(charset.status).toBe(200);
    expect(charset.json.reset).toBe(true);
    const again = await createSession(t);
    expect((await t.call(`/__sandbox/sessions/${again.id}`, { method: "DELETE" })).status).toBe(204);
  });
});

describe("the Host the control plane answers to", () => {
  it("regression: GET /__sandbox/sessions with Host: attacker.example (DNS rebinding) is refused (403 host_not_allowed), with no session secret", async () => {
    const t = await server();
    const s = await createSession(t);
    const r = await withHost(t, "/__sandbox/sessions", "attacker.example");
    expectProblem(r, hostRefused("attacker.example", "attacker.example", "/__sandbox/sessions"));
    expect(r.text).not.toContain(s.api_secret);
    expect(r.text).not.toContain(s.api_key);
    // With a port, and on a reset: refused all the same, and nothing is reset.
    expectProblem(
      await withHost(t, "/__sandbox/reset", "Attacker.Example:4010", { "content-type": "application/json" }, { method: "POST" }),
      hostRefused("Attacker.Example:4010", "Attacker.Example", "/__sandbox/reset"),
    );
    expectProblem(await withHost(t, "/__sandbox/clock", "a b"), hostRefused("a b", "<host name>", "/__sandbox/clock"));
    await expectAlive(t, s);
  });

  it.each([
    "localhost",
    "localhost:4010",
    "LOCALHOST.",
    "app.localhost:3000",
    "127.0.0.1",
    "127.9.8.7:80",
    "[::1]:4010",
    "[::1]",
    "10.0.0.7:4010",
    "192.168.1.20",
    "[fd00::1]",
    "sandbox:4010",
    "merchant_sandbox",
  ])("allows Host %s by default (loopback, IP literals, single-label service names)", async (host) => {
    const t = await server();
    const r = await withHost(t, "/__sandbox/sessions", host);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ sessions: [] });
  });

  it("allows the names given in allowedHosts (exact, or .domain for a domain and every name under it); * allows any", async () => {
    const t = await server({ allowedHosts: ["Sandbox.CI.example", ".svc.cluster.local"] });
    for (const host of ["sandbox.ci.example", "sandbox.ci.example:4010", "svc.cluster.local", "sandbox.ns.svc.cluster.local:80"]) {
      expect((await withHost(t, "/__sandbox/sessions", host)).status, host).toBe(200);
    }
    expectProblem(
      await withHost(t, "/__sandbox/sessions", "other.ci.example"),
      hostRefused("other.ci.example", "other.ci.example", "/__sandbox/sessions"),
    );
    expectProblem(
      await withHost(t, "/__sandbox/sessions", "evilsvc.cluster.local"),
      hostRefused("evilsvc.cluster.local", "evilsvc.cluster.local", "/__sandbox/sessions"),
    );
    const any = await server({ allowedHosts: ["*"] });
    expect((await withHost(any, "/__sandbox/sessions", "attacker.example")).status).toBe(200);
  });

  it("leaves health open to any Host and Origin (probes), and the merchant API as it was", async () => {
    const t = await server();
    const health = await withHost(t, "/__sandbox/health", "attacker.example", { origin: "https://evil.example", "sec-fetch-site": "cross-site" });
    expect(health.status).toBe(200);
    expect(health.json.status).toBe("ok");
    const token = await withHost(
      t,
      "/api/v2/auth/token",
      "attacker.example",
      { origin: "https://evil.example", "sec-fetch-site": "cross-site", "content-type": "application/json" },
      { method: "POST", body: JSON.stringify({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }) },
    );
    expect(token.status).toBe(200);
    expect(token.json.token_type).toBe("Bearer");
  });
});

describe("createSandbox options", () => {
  it("regression: adminToken '' is an error, not an open control plane", async () => {
    await expect(testSandbox({ adminToken: "" })).rejects.toThrow(
      "adminToken is empty: it would leave the control plane open to anyone while looking set. Use a random one, e.g. from `openssl rand -hex 16`, or leave the option out to run without one on a loopback address.",
    );
  });

  it("regression: an adminToken shorter than 16 characters is an error that says why", async () => {
    await expect(testSandbox({ adminToken: "x" })).rejects.toThrow(
      "adminToken must be at least 16 characters, got 1: a short token can be guessed by a web page or a neighbour on the network trying tokens. Use a random one, e.g. from `openssl rand -hex 16`, or leave the option out to run without one on a loopback address.",
    );
    await expect(testSandbox({ adminToken: "x".repeat(15) })).rejects.toMatchObject({ name: "ConfigError", setting: "adminToken" });
    await expect(testSandbox({ adminToken: "x".repeat(16) })).resolves.toBeDefined();
  });

  it("refuses an allowedHosts entry that is no host name, saying how to write one", async () => {
    for (const entry of ["http://sandbox.ci.example", "sandbox.ci.example:4010", "", "a b"]) {
      await expect(testSandbox({ allowedHosts: [entry] }), entry).rejects.toThrow(
        `allowedHosts entry '${entry}' is not a host name: write the name alone, without scheme or port (sandbox.ci.example), '.example.test' for a name and every name under it, or '*' for any host (unsafe: it lets web pages in through DNS rebinding)`,
      );
    }
  });
});

describe("in-process through msw", () => {
  it("answers the control plane at the base URL's host, and still refuses another site's Origin", async () => {
    const sandbox = await testSandbox({ frozenAt: T0 });
    const msw = setupServer(...createMswHandlers(sandbox, { baseUrl: "https://api.merchant.test" }));
    msw.listen({ onUnhandledRequest: "bypass" });
    try {
      const created = await fetch("https://api.merchant.test/__sandbox/sessions", {
        method: "POST",
        headers: { "content-type": "application/json", host: "api.merchant.test" },
      });
      expect(created.status).toBe(201);
      const refused = await fetch("https://api.merchant.test/__sandbox/reset", {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://evil.example" },
      });
      expect(refused.status).toBe(403);
      expect((await refused.json()).code).toBe("cross_site_request");
      expect(sandbox.sessions.list()).toHaveLength(1);
    } finally {
      msw.close();
    }
  });
});
