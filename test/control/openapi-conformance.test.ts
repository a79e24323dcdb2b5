import { BAD_BODIES, GOOD_BODIES } from "../support/control-bodies.js";
import { REFUSING_SCENARIOS } from "../support/library.js";
import { documentedStatus } from "../support/openapi-check.js";
import { compileErrors, dereference, validate } from "@readme/openapi-parser";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILT_IN_NAMES } from "../../src/profiles/builtins.js";
import { openApiDocument } from "../../src/control/openapi.js";
import { controlRouteTable } from "../../src/control/router.js";
import {
  DEFAULT_KEY,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  postEmpty,
  requestWithRepeatedHeaders,
  startTestServer,
  type Reply,
  type TestServer,
} from "../support/server.js";

/**
 * Every route answers only what the OpenAPI document lists for it: each documented operation is
 * driven over real HTTP (a real server on port 0) with a good request and with bad ones (unknown
 * query parameters, missing and wrong credentials, bad bodies, web-page requests, an absent
 * session), on a plain sandbox, one with an admin token, one with the control plane off, and as
 * merchants of the library scenarios that script refusals; every path also gets the methods it does
 * not take. Each answer's status must be documented for that operation (its scripted `default`
 * only for an answer that carries X-Sandbox-Rule), with the headers a client acts on, and a problem+json answer's `code` must be one
 * the documented response lists.
 */

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI response objects, read member by member
type Operation = { responses: Record<string, any> };
// biome-ignore lint/suspicious/noExplicitAny: OpenAPI path items, read member by member
type Doc = { paths: Record<string, Record<string, any>> };
const METHODS = ["get", "head", "post", "put", "patch", "delete", "options"];
const ADMIN_TOKEN = "conformance-admin-token";
const JWT_LOOKALIKE = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.";
const OVERSIZE = "x".repeat(70_000);
/** The headers a client acts on: when an answer has one, its documented response must list it. */
const SIGNIFICANT_HEADERS = ["www-authenticate", "allow", "retry-after", "deprecation", "sunset", "link", "location", "pragma", "x-sandbox-rule"];

/** The document with its shared responses resolved, and each of its operations. */
const doc = (await dereference(openApiDocument("0.0.0", controlRouteTable()) as never)) as unknown as Doc;
const operations = Object.entries(doc.paths).flatMap(([template, item]) =>
  METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), template, op: item[m] as Operation })),
);

interface Credentials {
  api_key: string;
  api_secret: string;
  payment_token: string;
  login?: { username?: string; email?: string; password?: string };
}

let plain: TestServer;
let guarded: TestServer;
let off: TestServer;
let checked = 0;
const seen = new Set<string>();

beforeAll(async () => {
  [plain, guarded, off] = await Promise.all([
    startTestServer(),
    startTestServer({ adminToken: ADMIN_TOKEN }),
    startTestServer({ controlPlane: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([plain?.close(), guarded?.close(), off?.close()]);
});

/**
 * Fails unless the answer's status, and its problem code, is documented for the operation; only an
 * answer a scenario rule scripted (X-Sandbox-Rule) may be the operation's `default`.
 */
function conforms(op: Operation, where: string, r: Reply): void {
  checked++;
  seen.add(String(r.status));
  const key = documentedStatus(op.responses, r.status, r.headers.has("x-sandbox-rule"));
  const what = `${where} → ${r.status} ${r.text.slice(0, 200)}`;
  expect(key, `${what}: status not documented`).toBeDefined();
  const documented = op.responses[key!];
  const documentedHeaders = Object.keys(documented.headers ?? {}).map((k) => k.toLowerCase());
  for (const header of SIGNIFICANT_HEADERS) {
    if (r.headers.has(header)) expect(documentedHeaders, `${what}: ${header}`).toContain(header);
  }
  const mediaType = (r.headers.get("content-type") ?? "").split(";")[0]!;
  if (r.text === "") {
    // No body: the document lists none, or names the codes of this status that send none.
    const head = where.startsWith("HEAD ");
    if (Object.keys(documented.content ?? {}).length > 0 && r.status !== 204 && !head)
      expect(documented["x-sandbox-no-body"], `${what}: no body`).toBeDefined();
    return;
  }
  expect(Object.keys(documented.content ?? {}), what).toContain(mediaType);
  const codes: string[] | undefined = documented.content[mediaType]?.schema?.allOf?.[1]?.properties?.code?.enum;
  if (codes) expect(codes, what).toContain(r.json?.code);
}

/** A fresh session of `scenario` on `t`: its id and first merchant's credentials. */
async function session(t: TestServer, scenario?: string, headers: Record<string, string> = {}): Promise<{ id: string; merchant: Credentials }> {
  const r = await t.call("/__sandbox/sessions", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(scenario ? { scenario } : {}),
  });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id, merchant: r.json.merchant };
}

async function accessToken(t: TestServer, c: Pick<Credentials, "api_key" | "api_secret">): Promise<string | undefined> {
  const r = await t.call("/api/v2/auth/token", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(c),
  });
  return r.status === 200 ? (r.json.access_token as string) : undefined;
}

/** The deprecated login's token of a merchant with a login that works (typ JWT). */
async function loginToken(t: TestServer, c: Credentials): Promise<string | undefined> {
  const login = { username: c.login?.username ?? c.login?.email ?? "merchant@sandbox.test", password: c.login?.password ?? "sandbox-password" };
  const r = await t.call("/api/login_check", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(login) });
  return r.status === 200 ? (r.json.token as string) : undefined;
}

/** The good request of an operation for a merchant, and the bad ones, as [label, path suffix, init]. */
function merchantProbes(
  method: string,
  template: string,
  c: Credentials,
  jwt: string | undefined,
  loginJwt?: string,
): Array<[string, string, RequestInit]> {
  const path = template.replace("{path}", "orders/42");
  const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
    method,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const bodies = (headers: Record<string, string>): Array<[string, string, RequestInit]> => [
    ["malformed JSON", path, json("{", headers)],
    ["JSON not an object", path, json("[1]", headers)],
    ["not UTF-8", path, { method, headers: { "content-type": "application/json", ...headers }, body: new Uint8Array([0x7b, 0xff, 0x7d]) }],
    ["text body", path, { method, headers: { "content-type": "text/plain", ...headers }, body: "x" }],
    ["oversize body", path, json({ pad: OVERSIZE }, headers)],
  ];
  switch (template) {
    case "/api/v2/auth/token": {
      const good = { api_key: c.api_key, api_secret: c.api_secret };
      return [
        ["good", path, json(good)],
        ["good, unknown query parameter", `${path}?x=1`, json(good)],
        ["good, as headers", path, { method, headers: { "x-api-key": c.api_key, "x-api-secret": c.api_secret } }],
        ["no credentials", path, { method }],
        ["no secret", path, json({ api_key: c.api_key })],
        ["wrong secret", path, json({ ...good, api_secret: "wrong" })],
        ["unknown key", path, json({ ...good, api_key: "nobody" })],
        ["conflicting key", path, json(good, { "x-api-key": "other" })],
        ["key not a string", path, json({ ...good, api_key: 42 })],
        ...bodies({}),
      ];
    }
    case "/api/v2/payment/init": {
      const auth = { authorization: `Bearer ${c.payment_token}` };
      return [
        ["good", path, json({ amount: 1 }, auth)],
        ["good, unknown query parameter", `${path}?x=1`, json({}, auth)],
        ["token in the query", `${path}?access_token=${jwt ?? JWT_LOOKALIKE}`, json({}, auth)],
        ["no credentials", path, { method }],
        ["the access token", path, { method, headers: { authorization: `Bearer ${jwt ?? JWT_LOOKALIKE}` } }],
        ["unknown payment token", path, { method, headers: { authorization: "Bearer mpt_unknown" } }],
        ["Basic", path, { method, headers: { authorization: "Basic abc" } }],
        ["empty bearer", path, { method, headers: { authorization: "Bearer " } }],
        ...bodies(auth),
      ];
    }
    case "/api/login_check": {
      const login = { username: c.login?.username ?? c.login?.email ?? "merchant@sandbox.test", password: c.login?.password ?? "sandbox-password" };
      return [
        ["good", path, json(login)],
        ["good, unknown query parameter", `${path}?x=1`, json(login)],
        ["wrong password", path, json({ ...login, password: "nope" })],
        ["no password", path, json({ username: login.username })],
        ["no body", path, { method }],
        ...bodies({}),
      ];
    }
    case "/.well-known/jwks.json":
      return [
        ["good", path, { method }],
        ["unknown query parameter", `${path}?x=1`, { method }],
      ];
    case "/":
      return [
        ["good", path, { method }],
        ["unknown query parameter", `${path}?x=1`, { method }],
        ["with an access token", path, { method, headers: { authorization: `Bearer ${jwt ?? JWT_LOOKALIKE}` } }],
      ];
    default: {
      // The payment and cashout groups: the access token, any method.
      const auth = { authorization: `Bearer ${jwt ?? JWT_LOOKALIKE}` };
      const withBody = ["POST", "PUT", "PATCH"].includes(method);
      return [
        ["good", path, { method, headers: auth }],
        ["good, unknown query parameter", `${path}?x=1`, { method, headers: auth }],
        ["token in the query", `${path}?access_token=${jwt ?? JWT_LOOKALIKE}`, { method, headers: auth }],
        ["no credentials", path, { method }],
        ["Basic", path, { method, headers: { authorization: "Basic abc" } }],
        ["malformed bearer", path, { method, headers: { authorization: 'Bearer "quoted"' } }],
        ["not a JWT", path, { method, headers: { authorization: "Bearer not-a-jwt" } }],
        ["unsigned JWT", path, { method, headers: { authorization: `Bearer ${JWT_LOOKALIKE}` } }],
        ["payment token", path, { method, headers: { authorization: `Bearer ${c.payment_token}` } }],
        ["the login's token", path, { method, headers: { authorization: `Bearer ${loginJwt ?? JWT_LOOKALIKE}` } }],
        ...(withBody ? bodies(auth) : []),
      ];
    }
  }
}

/** The good request of a control-plane operation, and the bad ones. */
function controlProbes(method: string, template: string, id: string): Array<[string, string, RequestInit]> {
  const path = template.replace("{asset}", "app.js").replace("{id}", id);
  const post = (body: string | undefined, contentType = "application/json"): RequestInit => ({
    method,
    headers: { "content-type": contentType },
    ...(body !== undefined && { body }),
  });
  if (method !== "POST") {
    return [
      ["good", path, { method }],
      ["unknown query parameter", `${path}?x=1`, { method }],
      ["bad limit and since", `${path}?limit=0&since=never`, { method }],
      ["web page", path, { method, headers: { origin: "https://evil.example" } }],
      ["cross-site fetch", path, { method, headers: { "sec-fetch-site": "cross-site" } }],
      ["no such session", template.replace("{asset}", "app.js").replace("{id}", "ses_0000000000000000"), { method }],
    ];
  }
  const good = GOOD_BODIES[template];
  return [
    ["good", path, post(good)],
    ["good, unknown query parameter", `${path}?x=1`, post(good)],
    ["not declared JSON", path, post(good ?? "{}", "text/plain")],
    ["no content type", path, { method }],
    ["malformed JSON", path, post("{")],
    ["JSON not an object", path, post("[1]")],
    ["unknown field", path, post('{"nope": 1}')],
    ["oversize body", path, post(JSON.stringify({ text: OVERSIZE }))],
    ["web page", path, { ...post(good), headers: { "content-type": "application/json", origin: "https://evil.example" } }],
    ["no such session", template.replace("{asset}", "app.js").replace("{id}", "ses_0000000000000000"), post(good)],
    ...(BAD_BODIES[template] ?? []).map((b): [string, string, RequestInit] => [`bad body ${b}`, path, post(b)]),
  ];
}

describe("every documented operation answers only what the document lists for it", () => {
  it(`drives all ${operations.length} operations with good and bad requests`, async () => {
    expect(operations.length).toBeGreaterThan(30);
    const merchants: Credentials[] = [
      { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET, payment_token: DEFAULT_PAYMENT_TOKEN },
      ...(await Promise.all(REFUSING_SCENARIOS.map(async (s) => (await session(plain, s)).merchant))),
    ];
    for (const { method, template, op } of operations.filter((o) => !o.template.startsWith("/__sandbox/"))) {
      for (const merchant of merchants) {
        const jwt = await accessToken(plain, merchant);
        const loginJwt = await loginToken(plain, merchant);
        for (const [label, path, init] of merchantProbes(method, template, merchant, jwt, loginJwt)) {
          conforms(op, `${method} ${path} (${label}, ${merchant.api_key})`, await plain.call(path, init));
        }
      }
    }
    // Headers sent twice (fetch would merge them: node:http does not).
    for (const { method, template, op } of operations.filter((o) => !o.template.startsWith("/__sandbox/"))) {
      const path = template.replace("{path}", "x").replace("{asset}", "app.js");
      const twice: Array<Record<string, string[]>> = [{ authorization: ["Bearer a", "Bearer b"] }, { "x-api-key": [DEFAULT_KEY, DEFAULT_KEY] }];
      for (const headers of twice) {
        conforms(op, `${method} ${path} (${Object.keys(headers)[0]} twice)`, await requestWithRepeatedHeaders(plain.url, path, headers, { method }));
      }
    }
    for (const { method, template, op } of operations.filter((o) => o.template.startsWith("/__sandbox/"))) {
      for (const [label, path, init] of controlProbes(method, template, (await session(plain)).id)) {
        conforms(op, `${method} ${path} (${label})`, await plain.call(path, init));
      }
      const { id } = await session(guarded, undefined, { "x-admin-token": ADMIN_TOKEN });
      const path = template.replace("{asset}", "app.js").replace("{id}", id);
      const body = method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {};
      for (const [label, headers] of [
        ["no admin token", {}],
        ["wrong admin token", { authorization: `Bearer ${"w".repeat(24)}` }],
        ["admin token", { "x-admin-token": ADMIN_TOKEN }],
      ] as const) {
        const init = { method, ...body, headers: { ...body.headers, ...headers } };
        conforms(op, `${method} ${path} (${label}, admin token set)`, await guarded.call(path, init));
      }
      conforms(
        op,
        `${method} ${path} (control plane off)`,
        await off.call(template.replace("{asset}", "app.js").replace("{id}", "ses_0000000000000000"), { method, ...body }),
      );
      // fetch will not send another Host: node:http does.
      const rebinding = await requestWithRepeatedHeaders(plain.url, path, { host: "attacker.example" }, { method });
      conforms(op, `${method} ${path} (foreign Host)`, rebinding);
    }
    // The methods a path does not take: 405 with Allow, documented on each of its operations.
    for (const [template, item] of Object.entries(doc.paths)) {
      const path = template
        .replace("{path}", "x")
        .replace("{asset}", "app.js")
        .replace("{id}", (await session(plain)).id);
      for (const method of METHODS.filter((m) => !item[m])) {
        const r = await plain.call(path, { method: method.toUpperCase(), ...(method === "post" && postEmpty()) });
        // Checked against each operation of the path that has bodies (a HEAD documents none).
        for (const m of METHODS.filter((m) => item[m] && m !== "head")) conforms(item[m], `${method.toUpperCase()} ${path} (method not taken)`, r);
      }
    }
    // The figures the report quotes; and proof the probes reached the refusals, not only the successes.
    console.info(`openapi conformance: ${operations.length} operations, ${checked} answers checked, statuses ${[...seen].sort().join(" ")}`);
    expect(checked).toBeGreaterThan(500);
    for (const status of ["200", "201", "204", "400", "401", "403", "404", "405", "410", "413", "415", "429", "503"])
      expect(seen, status).toContain(status);
  }, 120_000);
});

/** A profile as calibrate writes one: empty bodies, per-code texts and challenges, request ids, headers. */
const CALIBRATED_STYLE = fileURLToPath(new URL("../support/profiles/calibrated-style.yaml", import.meta.url));

describe("under every response profile, every merchant operation answers only what the served document lists for it", () => {
  // Each status must be documented as its own: never the scripted `default` (no rule fires here).
  for (const profile of [...BUILT_IN_NAMES, CALIBRATED_STYLE]) {
    it(`profile ${profile.split("/").at(-1)}`, async () => {
      const t = await startTestServer({ profile });
      try {
        const json = (await t.call("/__sandbox/openapi.json")).json;
        const valid = await validate(structuredClone(json));
        expect(valid.valid, valid.valid ? "" : compileErrors(valid)).toBe(true);
        expect(valid.warnings).toEqual([]);
        const served = (await dereference(json)) as unknown as Doc;
        const merchantOps = Object.entries(served.paths)
          .filter(([template]) => !template.startsWith("/__sandbox/"))
          .flatMap(([template, item]) =>
            METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), template, op: item[m] as Operation })),
          );
        const merchant = { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET, payment_token: DEFAULT_PAYMENT_TOKEN };
        const jwt = await accessToken(t, merchant);
        const loginJwt = await loginToken(t, merchant);
        const before = checked;
        for (const { method, template, op } of merchantOps) {
          for (const [label, path, init] of merchantProbes(method, template, merchant, jwt, loginJwt)) {
            conforms(op, `${method} ${path} (${label}, ${profile})`, await t.call(path, init));
          }
          const path = template.replace("{path}", "x");
          const twice: Array<Record<string, string[]>> = [{ authorization: ["Bearer a", "Bearer b"] }, { "x-api-key": [DEFAULT_KEY, DEFAULT_KEY] }];
          for (const headers of twice) {
            const r = await requestWithRepeatedHeaders(t.url, path, headers, { method });
            conforms(op, `${method} ${path} (${Object.keys(headers)[0]} twice, ${profile})`, r);
          }
        }
        expect(checked - before).toBeGreaterThan(200);
      } finally {
        await t.close();
      }
    }, 60_000);
  }
});
