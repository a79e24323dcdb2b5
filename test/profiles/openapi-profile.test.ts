import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { REQUEST_ID_PATTERNS } from "../../src/profiles/request-id.js";
import { startTestServer, type TestServer } from "../support/server.js";

/** GET /__sandbox/openapi.json describes the active profile's shapes, and stays a valid document. */

describe("the OpenAPI document under a profile", () => {
  let t: TestServer;
  // biome-ignore lint/suspicious/noExplicitAny: the served OpenAPI document, read member by member
  let doc: any;
  beforeAll(async () => {
    t = await startTestServer({
      profile: {
        name: "acme",
        token: { body: { result: { accessToken: "{{access_token}}", validity: "{{expires_in_minutes}}", env: "test" } } },
        refusal: { contentType: "application/json", body: { error: { code: "{{code}}", message: "{{message}}" } }, wwwAuthenticate: "omit" },
        paymentInit: { status: 200, body: { data: { id: "{{payment_id}}", url: "{{checkout_url}}" } } },
        login: { body: { jwt: "{{access_token}}" } },
      },
    });
    doc = (await t.call("/__sandbox/openapi.json")).json;
  });
  afterAll(() => t.close());

  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it("gives the token, payment/init and login answers the schemas derived from the templates", () => {
    const token = doc.paths["/api/v2/auth/token"].post.responses["200"].content;
    expect(token).toEqual({
      "application/json": {
        schema: {
          type: "object",
          properties: {
            result: {
              type: "object",
              properties: {
                accessToken: { type: "string", pattern: "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*$" },
                validity: { type: "number" },
                env: { type: "string", const: "test" },
              },
              required: ["accessToken", "validity", "env"],
            },
          },
          required: ["result"],
        },
      },
    });
    const init = doc.paths["/api/v2/payment/init"].post.responses;
    expect(init["201"]).toBeUndefined();
    expect(init["200"].content["application/json"].schema.properties.data.properties).toEqual({ id: { type: "string" }, url: { type: "string" } });
    expect(doc.paths["/api/login_check"].post.responses["200"].content["application/json"].schema).toEqual({
      type: "object",
      properties: { jwt: { type: "string", pattern: "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*$" } },
      required: ["jwt"],
    });
  });

  it("gives every merchant API refusal the profile's media type and body, without WWW-Authenticate; the control plane keeps problem+json", () => {
    // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI response object or its $ref
    const refusal = (r: any) => (r.$ref ? doc.components.responses[r.$ref.split("/").at(-1)] : r);
    const unauthorized = refusal(
      doc.paths["/api/v2/payment/{operation}"]?.get?.responses["401"] ?? doc.paths["/api/v2/auth/token"].post.responses["401"],
    );
    expect(Object.keys(unauthorized.content)).toEqual(["application/json"]);
    // One branch per code, told apart by the code each sends (a client can switch on it).
    const branch = (code: string) => ({
      type: "object",
      properties: {
        error: { type: "object", properties: { code: { type: "string", const: code }, message: { type: "string" } }, required: ["code", "message"] },
      },
      required: ["error"],
      description: `Sent for ${code}.`,
    });
    expect(unauthorized.content["application/json"].schema).toEqual({
      oneOf: ["unknown_api_key", "wrong_api_secret", "credentials_rejected", "merchant_disabled", "session_credentials_mismatch"].map(branch),
    });
    expect(unauthorized.headers["WWW-Authenticate"]).toBeUndefined();
    // The login's refused credentials (Lexik's own body without a profile) are a refusal like the rest.
    const loginRefused = refusal(doc.paths["/api/login_check"].post.responses["401"]);
    expect(loginRefused.content).toEqual({
      "application/json": { schema: { oneOf: ["login_invalid_credentials", "session_credentials_mismatch"].map(branch) } },
    });
    expect(loginRefused.description).toBe(
      "Unknown e-mail, wrong password, a disabled merchant, or a login a scenario rule rejects. In the 'acme' response profile's shape.",
    );
    const control = refusal(doc.paths["/__sandbox/sessions"].post.responses["400"]);
    expect(Object.keys(control.content)).toEqual(["application/problem+json"]);
  });
});

/** The response object an operation's status refers to (shared ones live in components.responses). */
// biome-ignore lint/suspicious/noExplicitAny: the served OpenAPI document, read member by member
function responseOf(doc: any, path: string, method: string, status: string): any {
  const r = doc.paths[path][method].responses[status];
  return r?.$ref ? doc.components.responses[r.$ref.split("/").at(-1)] : r;
}

/** Every `const` of the document, anywhere in it. */
function constants(node: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(node)) for (const item of node) constants(item, out);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "const") out.push(value);
      else constants(value, out);
    }
  }
  return out;
}

describe("the OpenAPI document says what a framework profile sends, per code", () => {
  const CALIBRATED_STYLE = fileURLToPath(new URL("../support/profiles/calibrated-style.yaml", import.meta.url));
  // biome-ignore lint/suspicious/noExplicitAny: served OpenAPI documents, read member by member
  const docs: Record<string, any> = {};
  const servers: TestServer[] = [];
  beforeAll(async () => {
    for (const [name, profile] of [
      ["spring", "spring"],
      ["lexik", "lexik"],
      ["calibrated", CALIBRATED_STYLE],
    ] as const) {
      const t = await startTestServer({ profile });
      servers.push(t);
      docs[name] = (await t.call("/__sandbox/openapi.json")).json;
    }
  });
  afterAll(() => Promise.all(servers.map((t) => t.close())));

  it("empty bodies: spring's bearer refusals list no content, and each code's challenge (the expiry by its format)", () => {
    const refused = responseOf(docs.spring, "/api/v2/payment/{path}", "get", "401");
    expect(refused.content).toBeUndefined();
    expect(refused.description).toMatch(/No body\.$/);
    const challenges = refused.headers["WWW-Authenticate"];
    expect(challenges.required).toBe(true);
    expect(challenges.schema.anyOf).toContainEqual({ type: "string", const: "Bearer" });
    expect(challenges.schema.anyOf).toContainEqual({
      type: "string",
      pattern:
        '^Bearer error="invalid_token", error_description="An error occurred while attempting to decode the Jwt: Jwt expired at (?:\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z)?", error_uri="https:\\/\\/tools\\.ietf\\.org\\/html\\/rfc6750#section-3\\.1"$',
    });
    expect(refused.headers["X-Sandbox-Explanation"]).toEqual({ schema: { type: "string", pattern: "^[\\x20-\\x7e]*$" }, required: true });
    // Spring Boot's error body elsewhere: its timestamp is Jackson's, a date-time with millis and +00:00.
    const body = responseOf(docs.spring, "/api/v2/auth/token", "post", "401").content["application/json"].schema;
    expect(body.properties.timestamp).toEqual({
      type: "string",
      format: "date-time",
      pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}\\+00:00$",
    });
    expect(body.properties.status).toEqual({ type: "integer", const: 401 });
  });

  it("per-code texts: lexik's 401 branches carry each message as a constant", () => {
    const body = responseOf(docs.lexik, "/api/v2/payment/{path}", "get", "401").content["application/json"].schema;
    // Symfony's ProblemNormalizer body (a code lexik leaves to it) shares no constant with Lexik's: anyOf.
    const schema = { oneOf: body.anyOf };
    const messages = schema.oneOf.map((b: { properties: { message?: { const?: string } } }) => b.properties.message?.const).filter(Boolean);
    expect(messages).toEqual(expect.arrayContaining(["JWT Token not found", "Invalid JWT Token", "Expired JWT Token", "Invalid credentials."]));
    const expired = schema.oneOf.find((b: { properties: { message?: { const?: string } } }) => b.properties.message?.const === "Expired JWT Token");
    expect(expired.description).toBe("Sent for token_expired.");
    expect(responseOf(docs.lexik, "/api/v2/payment/{path}", "get", "401").headers["Cache-Control"]).toEqual({
      schema: { type: "string", const: "no-cache, private" },
      required: true,
    });
  });

  it("per-request values: request ids by their shape's pattern, times by their format, never constants", () => {
    const doc = docs.calibrated;
    const requestId = { type: "string", pattern: REQUEST_ID_PATTERNS.hex32 };
    const token = responseOf(doc, "/api/v2/auth/token", "post", "200");
    expect(token.headers["X-Request-Id"]).toEqual({ schema: requestId, required: true });
    expect(token.headers["X-Token-Issued-At"]).toEqual({ schema: { type: "integer", minimum: 0 }, required: true });
    expect(token.content["application/json"].schema.properties.request_id).toEqual(requestId);
    const ok = responseOf(doc, "/api/v2/payment/{path}", "get", "200");
    expect(ok.content["application/json"].schema.properties.meta.properties).toEqual({
      request_id: requestId,
      at: { type: "string", format: "date-time", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}\\+00:00$" },
      unix: { type: "integer", minimum: 0 },
    });
    // payment/init answers with no body at all: no content, its Location templated.
    const created = responseOf(doc, "/api/v2/payment/init", "post", "201");
    expect(created.content).toBeUndefined();
    expect(created.headers.Location).toEqual({ schema: { type: "string", pattern: "^\\/api\\/v2\\/payment\\/[\\s\\S]*$" }, required: true });
    // A status where some codes send no body beside others that do names them.
    expect(responseOf(doc, "/api/v2/payment/{path}", "get", "401")["x-sandbox-no-body"]).toEqual(["credentials_missing", "token_expired"]);
    const isPerRequest = (v: unknown) =>
      typeof v === "string" && (new RegExp(REQUEST_ID_PATTERNS.hex32).test(v) || /^\d{4}-\d{2}-\d{2}T/.test(v) || /^\d{10,}$/.test(v));
    expect(constants(doc).filter(isPerRequest)).toEqual([]);
  });
});
