import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxOptions } from "../../src/app/sandbox.js";
import { BUILT_IN_NAMES } from "../../src/profiles/builtins.js";
import { header, OpenApiChecker, type WireReply, wireRequest } from "../support/openapi-check.js";
import { BAD_BODIES, GOOD_BODIES } from "../support/control-bodies.js";
import { REFUSING_SCENARIOS } from "../support/library.js";
import { DEFAULT_KEY, DEFAULT_PAYMENT_TOKEN, DEFAULT_SECRET, startTestServer, type TestServer } from "../support/server.js";

/**
 * Every answer is what the SERVED OpenAPI document (GET /__sandbox/openapi.json, as a client or a
 * validating proxy reads it) says its operation answers: status, the headers a client acts on and
 * each listed header's schema, the media type, and the body against its JSON Schema (ajv, draft
 * 2020-12 as OpenAPI 3.1 says, formats checked). Every operation is driven over real HTTP with a
 * good request and bad ones: undocumented query parameters, missing and wrong credentials, bodies
 * of each content type, web-page requests, an absent session; every path with the methods it does
 * not list (TRACE and an unknown method included); every GET route also with HEAD, which must
 * answer GET's status with no body and no Content-Length but GET's. On a plain sandbox, one with an
 * admin token, one with the control plane off, three in the built-in response profiles and two with
 * the other signing algorithms (each against its own served document), and as merchants of the
 * library scenarios that script refusals. All violations are reported together, in one failure.
 */

const ADMIN_TOKEN = "conformance-admin-token";
/** A profile as calibrate writes one: empty bodies, per-code texts and challenges, request ids, headers. */
const CALIBRATED_STYLE = fileURLToPath(new URL("../support/profiles/calibrated-style.yaml", import.meta.url));
const JWT_LOOKALIKE = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.";
const OVERSIZE = "x".repeat(70_000);
const NO_SESSION = "ses_0000000000000000";
/** Methods beyond the document's that clients and scanners send. */
const EXTRA_METHODS = ["TRACE", "CONNECT", "PROPFIND", "FOO"];
const ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", ...EXTRA_METHODS];

interface Probe {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

interface Credentials {
  api_key: string;
  api_secret: string;
  payment_token: string;
  login?: { email?: string; password?: string };
}

/** A body, as each content type a client may send it: declared JSON, mislabelled, undeclared, broken. */
function bodies(json: string, headers: Record<string, string> = {}): Array<Omit<Probe, "method" | "path">> {
  const as = (type: string | undefined, body: string | Uint8Array, label: string) => ({
    label,
    headers: { ...headers, ...(type && { "content-type": type }) },
    body,
  });
  return [
    as("application/json; charset=utf-8", json, "JSON with charset"),
    as("application/merge-patch+json", json, "+json"),
    as("text/plain", json, "JSON as text/plain"),
    as("application/x-www-form-urlencoded", json, "JSON as a form"),
    as("application/x-www-form-urlencoded", "a=1&b=2", "a form"),
    as("multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n', "multipart"),
    as("application/xml", "<a/>", "XML"),
    as(undefined, json, "JSON without a content type"),
    as("application/json", "{", "malformed JSON"),
    as("application/json", "[1]", "JSON not an object"),
    as("application/json", new Uint8Array([0x7b, 0xff, 0x7d]), "not UTF-8"),
    as("application/json", JSON.stringify({ pad: OVERSIZE }), "oversize"),
  ];
}

function merchantProbes(method: string, template: string, c: Credentials, jwt: string | undefined): Probe[] {
  const path = template.replace("{path}", "orders/42");
  const p = (label: string, headers: Record<string, string> = {}, body?: string, at = path): Probe => ({
    label,
    method,
    path: at,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(body !== undefined && { body }),
  });
  const withBodies = (good: string, headers: Record<string, string> = {}) =>
    bodies(good, headers).map((b): Probe => ({ ...b, method, path, label: `body: ${b.label}` }));
  switch (template) {
    case "/api/v2/auth/token": {
      const good = JSON.stringify({ api_key: c.api_key, api_secret: c.api_secret });
      return [
        p("good", {}, good),
        p("good, undocumented query", {}, good, `${path}?x=1&api_key=y`),
        p("as headers", { "x-api-key": c.api_key, "x-api-secret": c.api_secret }),
        p("Basic", { authorization: `Basic ${Buffer.from(`${c.api_key}:${c.api_secret}`).toString("base64")}` }),
        p("no credentials"),
        p("wrong secret", {}, JSON.stringify({ api_key: c.api_key, api_secret: "wrong" })),
        p("key not a string", {}, JSON.stringify({ api_key: 42, api_secret: c.api_secret })),
        p("conflicting key", { "x-api-key": "other" }, good),
        ...withBodies(good),
      ];
    }
    case "/api/v2/payment/init": {
      const auth = { authorization: `Bearer ${c.payment_token}` };
      const good = JSON.stringify({ amount: 1999, currency: "EUR", order_id: "o-1", reference: 7 });
      return [
        p("good", auth, good),
        p("good, undocumented query", auth, good, `${path}?x=1`),
        p("token in the query", auth, good, `${path}?access_token=${jwt ?? JWT_LOOKALIKE}`),
        p("no body", auth),
        p("no credentials"),
        p("the access token", { authorization: `Bearer ${jwt ?? JWT_LOOKALIKE}` }),
        p("unknown payment token", { authorization: "Bearer mpt_unknown" }),
        p("Basic", { authorization: "Basic abc" }),
        ...withBodies(good, auth),
      ];
    }
    case "/api/login_check": {
      const good = JSON.stringify({ username: c.login?.email ?? "merchant@sandbox.test", password: c.login?.password ?? "sandbox-password" });
      return [
        p("good", {}, good),
        p("good, undocumented query", {}, good, `${path}?x=1`),
        p("wrong password", {}, JSON.stringify({ username: "merchant@sandbox.test", password: "nope" })),
        p("no password", {}, JSON.stringify({ username: "merchant@sandbox.test" })),
        p("no body"),
        ...withBodies(good),
      ];
    }
    case "/.well-known/jwks.json":
      return [p("good"), p("undocumented query", {}, undefined, `${path}?x=1`), p("a body on GET", {}, '{"a": 1}')];
    case "/":
      return [
        p("good"),
        p("undocumented query", {}, undefined, `${path}?x=1`),
        p("with an access token", { authorization: `Bearer ${jwt ?? JWT_LOOKALIKE}` }),
      ];
    default: {
      const auth = { authorization: `Bearer ${jwt ?? JWT_LOOKALIKE}` };
      return [
        p("good", auth),
        p("good, undocumented query", auth, undefined, `${path}?x=1`),
        p("token in the query", auth, undefined, `${path}?access_token=${jwt ?? JWT_LOOKALIKE}`),
        p("no credentials"),
        p("Basic", { authorization: "Basic abc" }),
        p("not a JWT", { authorization: "Bearer not-a-jwt" }),
        p("payment token", { authorization: `Bearer ${c.payment_token}` }),
        // Every method reads a body alike (only its size): two of them stand for all.
        ...(["POST", "PATCH"].includes(method) ? withBodies('{"amount": 1}', auth) : []),
      ];
    }
  }
}

function controlProbes(method: string, template: string, id: string, headers: Record<string, string>): Probe[] {
  const path = template.replace("{asset}", "app.js").replace("{id}", id);
  const p = (label: string, extra: Record<string, string> = {}, body?: string | Uint8Array, at = path): Probe => ({
    label,
    method,
    path: at,
    headers: { ...headers, ...extra },
    ...(body !== undefined && { body }),
  });
  if (method !== "POST") {
    return [
      p("good"),
      p("undocumented query", {}, undefined, `${path}?x=1`),
      p("bad limit and since", {}, undefined, `${path}?limit=0&since=never`),
      p("filters", {}, undefined, `${path}?session=${id}&merchant=m&limit=5&since=req_1`),
      p("a body on GET", { "content-type": "application/json" }, '{"a": 1}'),
      p("web page", { origin: "https://evil.example" }),
      p("foreign Host", { host: "attacker.example" }),
      p("no such session", {}, undefined, template.replace("{asset}", "app.js").replace("{id}", NO_SESSION)),
    ];
  }
  const good = GOOD_BODIES[template] ?? "{}";
  const json = { "content-type": "application/json" };
  return [
    p("good", json, GOOD_BODIES[template]),
    p("good, undocumented query", json, GOOD_BODIES[template], `${path}?x=1`),
    p("no content type"),
    p("web page", { ...json, origin: "https://evil.example" }, good),
    p("no such session", json, good, template.replace("{asset}", "app.js").replace("{id}", NO_SESSION)),
    p("unknown field", json, '{"nope": 1}'),
    ...bodies(good).map((b) => p(`body: ${b.label}`, b.headers, b.body)),
    ...(BAD_BODIES[template] ?? []).map((b) => p(`bad body ${b}`, json, b)),
  ];
}

let plain: TestServer;
let guarded: TestServer;
let off: TestServer;
/**
 * Sandboxes whose merchant API answers differently, and whose documents say so: the built-in
 * response profiles, and the other signing algorithms (an EC key set; an empty one with HS256).
 */
const VARIANTS: ReadonlyArray<readonly [string, SandboxOptions]> = [
  ...BUILT_IN_NAMES.map((name) => [`profile ${name}`, { profile: name }] as const),
  ["calibrated-style profile file", { profile: CALIBRATED_STYLE }],
  ["ES256", { algorithm: "ES256" }],
  ["HS256", { algorithm: "HS256" }],
];
let variants: TestServer[] = [];

beforeAll(async () => {
  [plain, guarded, off, ...variants] = await Promise.all([
    startTestServer(),
    startTestServer({ adminToken: ADMIN_TOKEN }),
    startTestServer({ controlPlane: false }),
    ...VARIANTS.map(([, options]) => startTestServer(options)),
  ]);
});
afterAll(async () => {
  await Promise.all([plain, guarded, off, ...variants].map((t) => t?.close()));
});

/** The document a client reads: GET /__sandbox/openapi.json of that server. */
async function servedDocument(t: TestServer, headers: Record<string, string> = {}): Promise<OpenApiChecker> {
  const r = await wireRequest(t.server.port, "GET", "/__sandbox/openapi.json", headers);
  expect(r.status).toBe(200);
  return new OpenApiChecker(JSON.parse(r.body.toString("utf8")));
}

async function session(t: TestServer, scenario?: string, headers: Record<string, string> = {}): Promise<{ id: string; merchant: Credentials }> {
  const r = await wireRequest(
    t.server.port,
    "POST",
    "/__sandbox/sessions",
    { "content-type": "application/json", ...headers },
    JSON.stringify(scenario ? { scenario } : {}),
  );
  const json = JSON.parse(r.body.toString("utf8"));
  expect(r.status, JSON.stringify(json)).toBe(201);
  return { id: json.id, merchant: json.merchant };
}

/** A clock move, actions (now and next) and a reset on the session: one history entry of each kind. */
async function giveHistory(t: TestServer, id: string): Promise<void> {
  const bodies: Array<[string, unknown]> = [
    ["clock", { advance: "61m", freeze: true }],
    ["actions", { now: { expire_token: "all", rotate_secret: true }, next: { endpoint: "token", times: 1, then: { respond: { status: 503 } } } }],
    ["reset", {}],
  ];
  for (const [sub, body] of bodies) {
    const r = await wireRequest(
      t.server.port,
      "POST",
      `/__sandbox/sessions/${id}/${sub}`,
      { "content-type": "application/json" },
      JSON.stringify(body),
    );
    expect(r.status, r.body.toString("utf8")).toBe(200);
  }
}

async function accessToken(t: TestServer, c: Credentials): Promise<string | undefined> {
  const r = await wireRequest(t.server.port, "POST", "/api/v2/auth/token", { "content-type": "application/json" }, JSON.stringify(c));
  return r.status === 200 ? JSON.parse(r.body.toString("utf8")).access_token : undefined;
}

describe("every answer is what the served OpenAPI document says, body included", () => {
  it("drives every operation, every method and HEAD of every GET route: 0 violations", async () => {
    const violations: string[] = [];
    const statuses = new Set<number>();
    let answers = 0;
    const send = (t: TestServer, probe: Probe) => wireRequest(t.server.port, probe.method, probe.path, probe.headers, probe.body);
    /** Checks one answer against the operation `method template` of `checker`'s document. */
    const check = (checker: OpenApiChecker, template: string, method: string, probe: Probe, reply: WireReply, server: string) => {
      answers++;
      statuses.add(reply.status);
      const where = `${probe.method} ${probe.path} (${probe.label}, ${server})`;
      violations.push(...checker.violations(template, method, reply, where, probe.method === "HEAD"));
    };
    /** Sends `probe`; for a GET also its HEAD, which must answer GET's status and headers, with no body and no lying length. */
    const drive = async (t: TestServer, checker: OpenApiChecker, template: string, probe: Probe, server: string) => {
      const reply = await send(t, probe);
      check(checker, template, probe.method.toLowerCase(), probe, reply, server);
      if (probe.method !== "GET") return;
      const headProbe = { ...probe, method: "HEAD" };
      const head = await send(t, headProbe);
      check(checker, template, "head", headProbe, head, server);
      const length = header(head, "content-length");
      if (head.status !== reply.status)
        violations.push(`HEAD ${probe.path} (${probe.label}, ${server}) → ${head.status} where GET answered ${reply.status}`);
      else if (length !== undefined && Number(length) !== reply.body.length)
        violations.push(`HEAD ${probe.path} (${probe.label}, ${server}) → Content-Length ${length}, but GET's body is ${reply.body.length} bytes`);
    };

    const doc = await servedDocument(plain);
    const guardedDoc = await servedDocument(guarded, { "x-admin-token": ADMIN_TOKEN });
    const operations = doc.operations().filter(([, m]) => m !== "head");
    const merchantOps = operations.filter(([p]) => !p.startsWith("/__sandbox/"));
    // What a session's base URL serves: the paths that list it as a server (not `/`, the QA page's redirect).
    const underBaseOps = merchantOps.filter(([p]) => doc.serversOf(p).includes("/s/{session_id}"));
    const controlOps = operations.filter(([p]) => p.startsWith("/__sandbox/"));

    // The built-in merchant, and merchants whose scenarios script refusals; but the one that revokes
    // on the 2nd call, where a HEAD after its GET is rightly answered differently.
    const stateless = REFUSING_SCENARIOS.filter((s) => s !== "token-revoked-mid-session");
    const merchants: Credentials[] = [
      { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET, payment_token: DEFAULT_PAYMENT_TOKEN },
      ...(await Promise.all(stateless.map(async (s) => (await session(plain, s)).merchant))),
    ];
    for (const merchant of merchants) {
      const jwt = await accessToken(plain, merchant);
      for (const [template, method] of merchantOps) {
        for (const probe of merchantProbes(method.toUpperCase(), template, merchant, jwt)) await drive(plain, doc, template, probe, merchant.api_key);
      }
    }
    // Under a session's base URL (each merchant path's second server, /s/{session_id}): the session's
    // own merchant, another merchant's credentials there (401 session_credentials_mismatch), and an
    // ended session's URL (404 session_url_unknown).
    const own = await session(plain);
    const ended = await session(plain);
    expect((await wireRequest(plain.server.port, "DELETE", `/__sandbox/sessions/${ended.id}`, {})).status).toBe(204);
    const underBases: Array<[string, Credentials, string]> = [
      [`/s/${own.id}`, own.merchant, "its session's base URL"],
      [`/s/${own.id}`, merchants[0]!, "another merchant under a session's base URL"],
      [`/s/${ended.id}`, own.merchant, "an ended session's base URL"],
    ];
    for (const [base, merchant, label] of underBases) {
      const jwt = await accessToken(plain, merchant);
      for (const [template, method] of underBaseOps) {
        for (const probe of merchantProbes(method.toUpperCase(), template, merchant, jwt)) {
          await drive(plain, doc, template, { ...probe, path: base + probe.path }, label);
        }
      }
    }
    for (const [i, t] of variants.entries()) {
      const shaped = await servedDocument(t);
      const merchant = merchants[0]!;
      const jwt = await accessToken(t, merchant);
      for (const [template, method] of merchantOps) {
        for (const probe of merchantProbes(method.toUpperCase(), template, merchant, jwt)) await drive(t, shaped, template, probe, VARIANTS[i]![0]);
      }
      // Under a session's base URL the profile answers too: another merchant's credentials there
      // (session_credentials_mismatch), and an ended session's URL (session_url_unknown).
      const own = await session(t);
      const ended = await session(t);
      expect((await wireRequest(t.server.port, "DELETE", `/__sandbox/sessions/${ended.id}`, {})).status).toBe(204);
      for (const [base, label] of [
        [`/s/${own.id}`, "another merchant under a session's base URL"],
        [`/s/${ended.id}`, "an ended session's base URL"],
      ] as const) {
        for (const [template, method] of underBaseOps) {
          for (const probe of merchantProbes(method.toUpperCase(), template, merchant, jwt).slice(0, 3)) {
            await drive(t, shaped, template, { ...probe, path: base + probe.path }, `${VARIANTS[i]![0]}, ${label}`);
          }
        }
      }
    }
    for (const [template, method] of controlOps) {
      const { id } = await session(plain);
      // The session's answer then holds a history of each kind, checked against its schema.
      if (template === "/__sandbox/sessions/{id}") await giveHistory(plain, id);
      for (const probe of controlProbes(method.toUpperCase(), template, id, {})) await drive(plain, doc, template, probe, "plain");
      const guardedSession = await session(guarded, undefined, { "x-admin-token": ADMIN_TOKEN });
      const path = template.replace("{asset}", "app.js").replace("{id}", guardedSession.id);
      const body: { headers: Record<string, string>; body?: string } =
        method === "post" ? { headers: { "content-type": "application/json" }, body: "{}" } : { headers: {} };
      for (const [label, headers] of [
        ["no admin token", {}],
        ["wrong admin token", { authorization: `Bearer ${"w".repeat(24)}` }],
        ["admin token", { "x-admin-token": ADMIN_TOKEN }],
      ] as const) {
        await drive(
          guarded,
          guardedDoc,
          template,
          { label, method: method.toUpperCase(), path, headers: { ...body.headers, ...headers }, body: body.body },
          "admin token set",
        );
      }
      await drive(
        off,
        doc,
        template,
        {
          label: "control plane off",
          method: method.toUpperCase(),
          path: template.replace("{asset}", "app.js").replace("{id}", NO_SESSION),
          ...body,
        },
        "control plane off",
      );
    }
    // With a valid access token, so a protected group would answer them if it took them.
    const jwt = await accessToken(plain, merchants[0]!);
    // The methods a path does not list, TRACE and an unknown one included: each answer must be
    // documented on every operation of the path (a client cannot know which one it reached).
    for (const template of new Set(operations.map(([p]) => p))) {
      const methods = operations.filter(([p]) => p === template);
      const path = template
        .replace("{path}", "x")
        .replace("{asset}", "app.js")
        .replace("{id}", (await session(plain)).id);
      for (const method of ALL_METHODS.filter((m) => !doc.methodsOf(template).includes(m.toLowerCase()))) {
        const probe: Probe = {
          label: "method not listed",
          method,
          path,
          headers: { "content-type": "application/json", authorization: `Bearer ${jwt}` },
          body: method === "GET" || method === "HEAD" ? undefined : "{}",
        };
        const reply = await send(plain, probe);
        if (method === "OPTIONS") {
          // A browser's CORS preflight: the sandbox grants none, and must say so in a documented way.
          const preflight = {
            ...probe,
            label: "CORS preflight",
            headers: { origin: "https://app.example", "access-control-request-method": "POST" },
          };
          const answer = await send(plain, preflight);
          for (const [, m] of methods) check(doc, template, m, preflight, answer, "plain");
        }
        if (reply.status < 400) violations.push(`${method} ${path} (a method the document does not list) → ${reply.status}, not a refusal`);
        for (const [, m] of methods) check(doc, template, m, probe, reply, "plain");
      }
    }

    const figures = `${operations.length} operations (${doc.operations().length} with HEAD), ${answers} answers validated, statuses ${[...statuses].sort().join(" ")}`;
    console.info(`openapi answers: ${figures}, ${violations.length} violations`);
    expect(violations, `${violations.length} violations of the served document (${figures}):\n${violations.join("\n")}`).toEqual([]);
    // Proof the probes reached the refusals, not only the successes.
    for (const status of [200, 201, 204, 400, 401, 403, 404, 405, 410, 413, 415, 429, 503]) expect(statuses, String(status)).toContain(status);
  }, 120_000);
});
