import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
              properties: { accessToken: { type: "string" }, validity: { type: "number" }, env: { type: "string", const: "test" } },
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
      properties: { jwt: { type: "string" } },
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
    expect(unauthorized.content["application/json"].schema).toEqual({
      type: "object",
      properties: { error: { type: "object", properties: { code: { type: "string" }, message: { type: "string" } }, required: ["code", "message"] } },
      required: ["error"],
    });
    expect(unauthorized.headers["WWW-Authenticate"]).toBeUndefined();
    // The login's refused credentials (Lexik's own body without a profile) are a refusal like the rest.
    const loginRefused = refusal(doc.paths["/api/login_check"].post.responses["401"]);
    expect(loginRefused.content).toEqual(unauthorized.content);
    expect(loginRefused.description).toBe(
      "Unknown e-mail, wrong password, a disabled merchant, or a login a scenario rule rejects. In the 'acme' response profile's shape (code login_invalid_credentials).",
    );
    const control = refusal(doc.paths["/__sandbox/sessions"].post.responses["400"]);
    expect(Object.keys(control.content)).toEqual(["application/problem+json"]);
  });
});
