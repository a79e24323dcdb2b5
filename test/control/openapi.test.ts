import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileErrors, dereference, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINT_VARIANTS } from "../../src/control/mint.js";
import { CATALOGUE_CODES } from "../../src/core/error-catalogue.js";
import { openApiDocument } from "../../src/control/openapi.js";
import { controlRouteTable } from "../../src/control/router.js";
import { ROOT_ROUTE } from "../../src/control/endpoints/ui.js";
import { MERCHANT_ROUTE_TABLE } from "../../src/endpoints/merchant-routes.js";
import {
  DEFAULT_KEY,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  postEmpty,
  postJson,
  requestWithRepeatedHeaders,
  startTestServer,
  type Reply,
  type TestServer,
} from "../support/server.js";
import { documentedStatus } from "../support/openapi-check.js";

/**
 * GET /__sandbox/openapi.json: a valid OpenAPI 3.1 document (checked by a real validator), that
 * lists every route the routers serve and nothing else, every refusal code of the error catalogue
 * (which the error classes take by type, so the source cannot throw another), and that the live server's answers conform to (status, media type, code, headers).
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (rel: string) => readFileSync(join(ROOT, rel), "utf8");
const PKG = JSON.parse(read("package.json")) as { version: string };

type Doc = {
  openapi: string;
  info: { version: string };
  // The parsed document is walked deep and checked against itself; typing every level would only restate the spec.
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI operation object, read member by member
  paths: Record<string, Record<string, any>>;
  // biome-ignore lint/suspicious/noExplicitAny: OpenAPI schema and security scheme objects, read member by member
  components: { schemas: Record<string, any>; securitySchemes: Record<string, any> };
  tags: Array<{ name: string }>;
};
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every "METHOD /path" the document has. */
function operations(doc: Doc): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`));
}

/**
 * The merchant API the spec defines: the exact paths (each with the methods its endpoint takes) and
 * the two protected groups, any method. The route table the router is built from must be exactly this.
 */
const MERCHANT_ROUTES: Record<string, string[]> = {
  "/api/v2/auth/token": ["POST"],
  "/api/v2/payment/init": ["POST"],
  "/api/login_check": ["POST"],
  "/.well-known/jwks.json": ["GET", "HEAD"],
  "/api/v2/payment/{path}": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
  "/api/v2/cashout/{path}": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
};

/** The control plane's route table, read from the router itself. */
function controlRoutes(): Record<string, string[]> {
  return Object.fromEntries(controlRouteTable().map(({ path, methods }) => [path, [...methods]]));
}

/** The merchant route table the router is built from (src/endpoints/merchant-routes.ts). */
function merchantRoutes(): Record<string, string[]> {
  return Object.fromEntries(MERCHANT_ROUTE_TABLE.map(({ path, methods }) => [path, [...methods]]));
}

/** The codes the ErrorCode schema documents (its `const` members). */
function documentedCodes(doc: Doc): string[] {
  return (doc.components.schemas.ErrorCode.anyOf as Array<{ const?: string }>).flatMap((c) => (c.const === undefined ? [] : [c.const]));
}

/** Every `code: {enum}` a response narrows ProblemDetails to, anywhere in the document. */
function narrowedCodes(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) narrowedCodes(n, out);
  else if (node && typeof node === "object") {
    const o = node as { type?: unknown; properties?: { code?: { enum?: string[] } } };
    if (o.properties?.code?.enum && o.type === "object") out.push(...o.properties.code.enum);
    for (const v of Object.values(o)) narrowedCodes(v, out);
  }
  return out;
}

let t: TestServer;
let reply: Reply;
let doc: Doc;

beforeAll(async () => {
  t = await startTestServer();
  reply = await t.call("/__sandbox/openapi.json");
  doc = reply.json as Doc;
});
afterAll(() => t.close());

describe("GET /__sandbox/openapi.json", () => {
  it("answers 200 application/json with the document", () => {
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("application/json");
    expect(reply.headers.get("cache-control")).toBe("no-cache");
    expect(doc).toEqual(openApiDocument(PKG.version, controlRouteTable()));
  });

  it("is a valid OpenAPI 3.1 document (@readme/openapi-parser)", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(result.specification).toBe("OpenAPI");
    expect(result.warnings).toEqual([]);
  });

  it("has the package version", () => {
    expect(doc.info.version).toBe(PKG.version);
  });

  it("documents every route the routers serve, and no other", () => {
    const control = controlRoutes();
    expect(Object.keys(control).length).toBeGreaterThanOrEqual(12);
    expect(merchantRoutes()).toEqual(MERCHANT_ROUTES);
    // A group's prefix itself (/api/v2/payment) is served as any path under it, and documented so.
    const prefixes = Object.fromEntries(MERCHANT_ROUTE_TABLE.flatMap((r) => (r.groupPrefix ? [[r.groupPrefix, [...r.methods]]] : [])));
    expect(Object.keys(prefixes)).toEqual(["/api/v2/payment", "/api/v2/cashout"]);
    // `/`, served beside them (the redirect to the QA page), from the row the router reads.
    const root = { [ROOT_ROUTE.path]: [...ROOT_ROUTE.methods] };
    const served = Object.entries({ ...merchantRoutes(), ...prefixes, ...root, ...control }).flatMap(([path, methods]) =>
      methods.map((m) => `${m} ${path}`),
    );
    expect(operations(doc).sort()).toEqual(served.sort());
  });

  it("documents every code of the error catalogue, each once, and responses name only catalogue codes", () => {
    const documented = documentedCodes(doc);
    expect(new Set(documented).size, "a code is documented twice").toBe(documented.length);
    expect(documented).toEqual(CATALOGUE_CODES);
    expect(documented.length).toBeGreaterThan(60);
    const narrowed = narrowedCodes(doc);
    expect(narrowed.length).toBeGreaterThan(50);
    expect(
      [...new Set(narrowed)].filter((c) => !documented.includes(c)),
      "a response names an undocumented code",
    ).toEqual([]);
  });

  it("tags every operation, marks the login deprecated, and declares the security schemes", () => {
    const tags = doc.tags.map((x) => x.name);
    expect(tags).toEqual(["Merchant API", "Deprecated", "Control plane"]);
    for (const op of operations(doc)) {
      const [method, path] = op.split(" ") as [string, string];
      const operation = doc.paths[path]![method.toLowerCase()];
      expect(operation.tags, op).toEqual([
        path.startsWith("/__sandbox/") || path === "/" ? "Control plane" : path === "/api/login_check" ? "Deprecated" : "Merchant API",
      ]);
      expect(operation.deprecated === true, op).toBe(path === "/api/login_check");
      expect(operation.security, `${op} says what authorises it`).toBeDefined();
    }
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(
      ["AccessToken", "AdminToken", "AdminTokenHeader", "ApiKeyHeader", "ApiSecretHeader", "PaymentToken"].sort(),
    );
    expect(doc.paths["/api/v2/cashout/{path}"]!.post.security).toEqual([{ AccessToken: ["cashout"] }]);
    expect(doc.paths["/api/v2/payment/init"]!.post.security).toEqual([{ PaymentToken: [] }]);
  });

  it("lists the token-minting catalogue as the code defines it", () => {
    expect(doc.components.schemas.MintVariant.enum).toEqual(Object.keys(MINT_VARIANTS));
    const expected = new Set(Object.values(MINT_VARIANTS).map((v) => v ?? null));
    expect(new Set(doc.components.schemas.MintedToken.properties.expected_error.enum)).toEqual(expected);
  });
});

describe("the live server matches the document", () => {
  /** A fresh session id for the paths that take one. */
  async function sessionId(): Promise<string> {
    const r = await t.call("/__sandbox/sessions", postEmpty());
    expect(r.status).toBe(201);
    return r.json.id as string;
  }

  it("answers every documented operation (no 404 not_found, no 405)", async () => {
    for (const op of operations(doc)) {
      const [method, template] = op.split(" ") as [string, string];
      const path = template
        .replace("{path}", "anything")
        .replace("{asset}", "app.js")
        .replace("{id}", template.includes("{id}") ? await sessionId() : "");
      const r = await t.call(path, { method });
      expect(r.status, op).not.toBe(405);
      expect(r.status === 404 && (method === "HEAD" || r.json?.code === "not_found"), `${op}: ${r.text}`).toBe(false);
    }
  });

  let resolvedDoc: Doc | undefined;

  /** Checks one live answer against the documented response of its operation. */
  async function conforms(method: string, template: string, r: Reply): Promise<void> {
    resolvedDoc ??= (await dereference(structuredClone(doc) as never)) as unknown as Doc;
    const resolved = resolvedDoc;
    const operation = resolved.paths[template]![method.toLowerCase()];
    const where = `${method} ${template} → ${r.status} ${r.text.slice(0, 200)}`;
    const key = documentedStatus(operation.responses, r.status, r.headers.has("x-sandbox-rule"));
    expect(key, `${where}: status not documented`).toBeDefined();
    const documented = operation.responses[key!];
    const mediaType = (r.headers.get("content-type") ?? "").split(";")[0]!;
    if (r.text !== "") expect(Object.keys(documented.content ?? {}), where).toContain(mediaType);
    const schema = documented.content?.[mediaType]?.schema;
    const narrowed = schema?.allOf?.[1]?.properties;
    if (narrowed?.code) expect(narrowed.code.enum, where).toContain(r.json.code);
    if (narrowed?.status?.const) expect(r.json.status, where).toBe(narrowed.status.const);
    if (narrowed?.error?.const) expect(r.json.error, where).toBe(narrowed.error.const);
    if (mediaType === "application/problem+json") expect(documentedCodes(doc), where).toContain(r.json.code);
    for (const header of ["www-authenticate", "allow", "retry-after", "deprecation", "sunset", "link", "location", "pragma", "x-sandbox-rule"]) {
      if (r.headers.has(header)) {
        expect(
          Object.keys(documented.headers ?? {}).map((k) => k.toLowerCase()),
          `${where}: ${header}`,
        ).toContain(header);
      }
    }
  }

  it("gives the documented statuses, media types, codes and headers", async () => {
    const jwt = await t.token();
    const jsonBody = (b: unknown) => postJson(b);
    const samples: Array<[string, string, string, RequestInit?]> = [
      ["POST", "/api/v2/auth/token", "/api/v2/auth/token", jsonBody({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET })],
      ["POST", "/api/v2/auth/token", "/api/v2/auth/token", { method: "POST", headers: { "x-api-key": DEFAULT_KEY, "x-api-secret": DEFAULT_SECRET } }],
      ["POST", "/api/v2/auth/token", "/api/v2/auth/token", jsonBody({ api_key: DEFAULT_KEY })],
      ["POST", "/api/v2/auth/token", "/api/v2/auth/token", jsonBody({ api_key: DEFAULT_KEY, api_secret: "wrong" })],
      ["POST", "/api/v2/auth/token", "/api/v2/auth/token", { method: "POST", headers: { "content-type": "text/plain" }, body: "x" }],
      ["POST", "/api/v2/auth/token", "/api/v2/auth/token", { method: "POST", headers: { "content-type": "application/json" }, body: "{" }],
      ["POST", "/api/v2/auth/token", "/api/v2/auth/token", jsonBody({ api_key: DEFAULT_KEY, api_secret: "x".repeat(70_000) })],
      ["GET", "/api/v2/payment/{path}", "/api/v2/payment/anything", { headers: { authorization: `Bearer ${jwt}` } }],
      ["POST", "/api/v2/cashout/{path}", "/api/v2/cashout/payouts", { method: "POST", headers: { authorization: `Bearer ${jwt}` } }],
      ["GET", "/api/v2/payment/{path}", "/api/v2/payment/anything", {}],
      ["GET", "/api/v2/payment/{path}", "/api/v2/payment/anything", { headers: { authorization: "Basic abc" } }],
      ["GET", "/api/v2/payment/{path}", `/api/v2/payment/anything?access_token=${jwt}`, {}],
      ["DELETE", "/api/v2/cashout/{path}", "/api/v2/cashout/x", { method: "DELETE", headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` } }],
      [
        "POST",
        "/api/v2/payment/init",
        "/api/v2/payment/init",
        { method: "POST", headers: { authorization: `Bearer ${DEFAULT_PAYMENT_TOKEN}` }, body: "{}" },
      ],
      ["POST", "/api/v2/payment/init", "/api/v2/payment/init", { method: "POST", headers: { authorization: `Bearer ${jwt}` } }],
      ["POST", "/api/v2/payment/init", "/api/v2/payment/init", { method: "POST" }],
      ["POST", "/api/login_check", "/api/login_check", jsonBody({ username: "merchant@sandbox.test", password: "sandbox-password" })],
      ["POST", "/api/login_check", "/api/login_check", jsonBody({ username: "merchant@sandbox.test", password: "nope" })],
      ["POST", "/api/login_check", "/api/login_check", jsonBody({ username: "merchant@sandbox.test" })],
      ["GET", "/.well-known/jwks.json", "/.well-known/jwks.json", {}],
      ["GET", "/__sandbox/health", "/__sandbox/health", {}],
      ["POST", "/__sandbox/clock", "/__sandbox/clock", jsonBody({})],
      ["POST", "/__sandbox/clock", "/__sandbox/clock", jsonBody({ advance: "1s" })],
      ["GET", "/__sandbox/requests", "/__sandbox/requests?limit=0", {}],
      ["GET", "/__sandbox/report", "/__sandbox/report", {}],
      ["POST", "/__sandbox/tokens", "/__sandbox/tokens", jsonBody({ variant: "expired" })],
      ["POST", "/__sandbox/tokens", "/__sandbox/tokens", jsonBody({ merchant: "nobody" })],
      ["POST", "/__sandbox/sessions", "/__sandbox/sessions", jsonBody({ scenario: "no-such-scenario" })],
      ["GET", "/__sandbox/sessions/{id}", "/__sandbox/sessions/ses_0000000000000000", {}],
      ["POST", "/__sandbox/scan", "/__sandbox/scan", jsonBody({ text: `log line\nAuthorization: Bearer ${jwt}` })],
      ["POST", "/__sandbox/scan", "/__sandbox/scan", jsonBody({})],
      // Web pages kept out of the control plane.
      ["POST", "/__sandbox/reset", "/__sandbox/reset", {}],
      ["POST", "/__sandbox/sessions", "/__sandbox/sessions", { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" }],
      ["POST", "/__sandbox/reset", "/__sandbox/reset", postEmpty({ origin: "https://evil.example" })],
      ["GET", "/__sandbox/sessions", "/__sandbox/sessions", { headers: { "sec-fetch-site": "cross-site" } }],
    ];
    for (const [method, template, path, init] of samples) {
      await conforms(method, template, await t.call(path, { method, ...init }));
    }
    // fetch will not send another Host: node:http does.
    await conforms("GET", "/__sandbox/sessions", await requestWithRepeatedHeaders(t.url, "/__sandbox/sessions", { host: "attacker.example" }));
    // Refused methods: 405 with Allow (and, on the login, the deprecation headers).
    for (const [path, method] of [
      ["/api/v2/auth/token", "POST"],
      ["/api/login_check", "POST"],
      ["/api/v2/payment/init", "POST"],
      ["/.well-known/jwks.json", "GET"],
    ] as const) {
      const r = await t.call(path, { method: method === "GET" ? "POST" : "GET" });
      expect(r.status).toBe(405);
      const documented = doc.paths[path]![method.toLowerCase()].responses["405"];
      expect(documented, path).toBeDefined();
      if (path === "/api/login_check") await conforms("POST", path, r);
    }
  });

  it("documents the scripted answers of a scenario (503, Retry-After, X-Sandbox-Rule)", async () => {
    const session = await t.call("/__sandbox/sessions", postJson({ scenario: "token-endpoint-outage" }));
    expect(session.status).toBe(201);
    await conforms("POST", "/__sandbox/sessions", session);
    const { api_key, api_secret } = session.json.merchant;
    const r = await t.call("/api/v2/auth/token", postJson({ api_key, api_secret }));
    expect(r.status).toBe(503);
    expect(r.headers.get("x-sandbox-rule")).toMatch(/^token-endpoint-outage\//);
    await conforms("POST", "/api/v2/auth/token", r);
  });
});
