import { describe, expect, it } from "vitest";
import { expectProblem } from "../support/expect.js";
import {
  createSession,
  postEmpty,
  problem,
  rawRequest,
  type Reply,
  requestWithRepeatedHeaders,
  serverPerDescribe,
  serversPerTest,
} from "../support/server.js";

/**
 * The QA page over real HTTP (a real server on port 0): /__sandbox/ui/ and its two files with
 * their security headers, the redirects that lead there, and its access rules: it needs no admin
 * token and opens from a link on another site (it holds nothing of any session), but answers only
 * to a Host the sandbox answers to, not with the control plane off, and never under a session's
 * base URL. The page's own behaviour is the browser tests'.
 */

const UI = "/__sandbox/ui/";
/** What every file of the page is sent with, exactly. */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};
const ADMIN_TOKEN = "qa-page-admin-token";
const NO_FILE = (name: string) => `The QA page has no file '${name}': it serves index.html, app.js, app.css. Open /__sandbox/ui/ in a browser.`;
/** The merchant API's 404 of `/`, which lists what the sandbox serves. */
const NO_ENDPOINT = (method: string) =>
  `No endpoint at ${method} /. This sandbox serves: POST /api/v2/auth/token, ANY /api/v2/payment/*, POST /api/v2/payment/init, ANY /api/v2/cashout/*, POST /api/login_check, GET /.well-known/jwks.json, GET /__sandbox/health.`;
const CONTROL_OFF = "The control plane is turned off (--no-control-plane); only GET /__sandbox/health answers.";

function expectPageFile(r: Reply, contentType: string): void {
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  expect(r.headers.get("content-type")).toBe(contentType);
  for (const [name, value] of Object.entries(PAGE_HEADERS)) expect(r.headers.get(name), name).toBe(value);
  // No CORS: another origin's script may not read the page.
  expect(r.headers.get("access-control-allow-origin")).toBeNull();
}

function expectRedirectToPage(r: Reply): void {
  expect(r.status).toBe(302);
  expect(r.headers.get("location")).toBe(UI);
  expect(r.headers.get("cache-control")).toBe("no-cache");
  expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  expect(r.text).toBe(`See ${UI}\n`);
}

describe("the QA page on a sandbox with the control plane on", () => {
  const t = serverPerDescribe();

  it("GET /__sandbox/ui/: the page's HTML, with its security headers, loading its module script", async () => {
    const r = await t().call(UI);
    expectPageFile(r, "text/html; charset=utf-8");
    expect(r.text).toContain('<script type="module" src="app.js"></script>');
    expect(r.text).toContain('<link rel="stylesheet" href="app.css" />');
    expect(r.headers.get("content-length")).toBe(String(Buffer.byteLength(r.text)));
  });

  it("app.js and app.css, with their content types and the same headers", async () => {
    const js = await t().call(`${UI}app.js`);
    expectPageFile(js, "text/javascript; charset=utf-8");
    expect(js.text.length).toBeGreaterThan(1000);
    const css = await t().call(`${UI}app.css`);
    expectPageFile(css, "text/css; charset=utf-8");
    expect(css.text.length).toBeGreaterThan(0);
    // index.html by name is the page itself.
    expect((await t().call(`${UI}index.html`)).text).toBe((await t().call(UI)).text);
  });

  it("any other file: 404 naming the files it serves", async () => {
    for (const name of ["app.js.map", "favicon.ico", "APP.JS"]) {
      expectProblem(await t().call(`${UI}${name}`), problem(404, "Not Found", "not_found", NO_FILE(name), `${UI}${name}`, "not_found"));
    }
  });

  it("no path traversal: an encoded ../ names no file of the page (sent raw: a URL parser would resolve it first)", async () => {
    for (const [sent, decoded] of [
      ["%2e%2e%2fpackage.json", "../package.json"],
      ["..%2fpackage.json", "../package.json"],
      ["%2E%2E%2F%2E%2E%2Fpackage.json", "../../package.json"],
    ] as const) {
      const r = await rawRequest(t(), "GET", `${UI}${sent}`);
      expect([r.status, r.json.code, r.json.detail], sent).toEqual([404, "not_found", NO_FILE(decoded)]);
      expect(r.text, sent).not.toContain('"name": "merchant-sandbox"');
    }
    // A whole `..` segment is refused before routing, for every path (issue 23 §14).
    const dots = await rawRequest(t(), "GET", `${UI}%2e%2e`);
    expect([dots.status, dots.json.code]).toEqual([400, "path_dot_segment"]);
    expect(dots.text).not.toContain('"name": "merchant-sandbox"');
  });

  it("GET /__sandbox/ui (no slash) and GET / redirect to the page; POST / is the merchant API's 404", async () => {
    expectRedirectToPage(await t().call("/__sandbox/ui"));
    expectRedirectToPage(await t().call("/"));
    expectProblem(await t().call("/", postEmpty()), problem(404, "Not Found", "not_found", NO_ENDPOINT("POST"), "/", "not_found"));
  });

  it("HEAD on the page: GET's status and headers, Content-Length included, and no body", async () => {
    const get = await t().call(UI);
    const head = await rawRequest(t(), "HEAD", UI);
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    for (const name of ["content-type", "content-length", ...Object.keys(PAGE_HEADERS)]) {
      expect(head.headers.get(name), name).toBe(get.headers.get(name));
    }
  });

  it("takes GET and HEAD only: 405 with Allow", async () => {
    const r = await t().call(UI, postEmpty());
    expectProblem(
      r,
      problem(405, "Method Not Allowed", "method_not_allowed", `POST is not allowed on ${UI}. Use GET or HEAD.`, UI, "method_not_allowed"),
      { headers: { allow: "GET, HEAD" } },
    );
  });

  it("opens from a link on another site (Sec-Fetch-Site: cross-site, another Origin), while the operations refuse such requests", async () => {
    for (const headers of [{ "sec-fetch-site": "cross-site" }, { origin: "https://elsewhere.example" }] as Array<Record<string, string>>) {
      expectPageFile(await t().call(UI, { headers }), "text/html; charset=utf-8");
      expectPageFile(await t().call(`${UI}app.js`, { headers }), "text/javascript; charset=utf-8");
      const sessions = await t().call("/__sandbox/sessions", { headers });
      expect([sessions.status, sessions.json.code]).toEqual([403, "cross_site_request"]);
    }
  });

  it("refuses a Host the sandbox does not answer to (DNS rebinding): 403 host_not_allowed on the page and its files", async () => {
    for (const path of [UI, `${UI}app.js`, "/__sandbox/ui"]) {
      const r = await requestWithRepeatedHeaders(t().url, path, { host: "attacker.example" });
      expect([r.status, r.json.code, r.headers.get("content-security-policy")], path).toEqual([403, "host_not_allowed", null]);
      expect(r.json.detail).toMatch(/^The control plane does not answer to Host 'attacker\.example'/);
    }
    // A single-label name (a docker service) and localhost are allowed.
    for (const host of ["sandbox:4010", "localhost"]) {
      expect((await requestWithRepeatedHeaders(t().url, UI, { host })).status, host).toBe(200);
    }
  });

  it("is never served under a session's base URL: 404 not_found there (no redirect), journaled in the session", async () => {
    const s = await createSession(t());
    const base = `/s/${s.id}`;
    expectProblem(await t().call(`${base}/`), problem(404, "Not Found", "not_found", NO_ENDPOINT("GET"), "/", "not_found"), {
      headers: { location: null },
    });
    const page = await t().call(`${base}${UI}`);
    expectProblem(
      page,
      problem(
        404,
        "Not Found",
        "not_found",
        `The control plane is not served under a session's base URL: call GET ${UI} at the root of the sandbox, without /s/{session_id}.`,
        UI,
        "not_found",
      ),
      { headers: { location: null, "content-security-policy": null } },
    );
    const journal = await t().call(`/__sandbox/requests?session=${s.id}`);
    expect(
      (journal.json.requests as Array<Record<string, unknown>>).map((e) => [
        e.method,
        e.path,
        e.status,
        e.endpoint,
        e.code,
        e.session,
        e.viaSessionUrl,
      ]),
    ).toEqual([
      ["GET", "/", 404, "unknown", "not_found", s.id, true],
      ["GET", UI, 404, "unknown", "not_found", s.id, true],
    ]);
  });
});

describe("the QA page with an admin token set", () => {
  const t = serverPerDescribe({ adminToken: ADMIN_TOKEN });

  it("the page and its files need no token (the page asks for it), while the operations answer 401", async () => {
    expectPageFile(await t().call(UI), "text/html; charset=utf-8");
    expectPageFile(await t().call(`${UI}app.js`), "text/javascript; charset=utf-8");
    expectPageFile(await t().call(`${UI}app.css`), "text/css; charset=utf-8");
    expectRedirectToPage(await t().call("/"));
    const sessions = await t().call("/__sandbox/sessions");
    expect([sessions.status, sessions.json.code]).toEqual([401, "admin_token_required"]);
    const withToken = await t().call("/__sandbox/sessions", { headers: { "x-admin-token": ADMIN_TOKEN } });
    expect(withToken.status).toBe(200);
  });
});

describe("the QA page with the control plane off", () => {
  const start = serversPerTest();

  it("GET / is the merchant API's 404 (no redirect) and the page is absent, as the rest of /__sandbox/ but health", async () => {
    const t = await start({ controlPlane: false });
    expectProblem(await t.call("/"), problem(404, "Not Found", "not_found", NO_ENDPOINT("GET"), "/", "not_found"), { headers: { location: null } });
    for (const path of [UI, `${UI}app.js`, "/__sandbox/ui"]) {
      expectProblem(await t.call(path), problem(404, "Not Found", "not_found", CONTROL_OFF, path, "not_found"), {
        headers: { "content-security-policy": null },
      });
    }
    expect((await t.call("/__sandbox/health")).status).toBe(200);
  });
});
