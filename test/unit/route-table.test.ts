import { describe, expect, it } from "vitest";
import { createRouter } from "../../src/app/routes.js";
import { sandboxPathsOf } from "../../src/app/sandbox-paths.js";
import { merchantDocs } from "../../src/control/openapi/merchant-operations.js";
import { pathsOf } from "../../src/control/openapi/operations.js";
import { wrongBasePathOf } from "../../src/control/findings/paths.js";
import type { JournalEntry } from "../../src/control/journal.js";
import { DEFAULT_SETTINGS } from "../../src/core/config.js";
import { jsonResponse, type Endpoint, type EndpointName, type RequestTrace } from "../../src/core/context.js";
import { MethodNotAllowed, NotFound } from "../../src/core/errors.js";
import type { SandboxRequest } from "../../src/core/http-types.js";
import { API_PATHS, apiPaths } from "../../src/endpoints/api-paths.js";
import { MERCHANT_ROUTE_TABLE, type MerchantRoute } from "../../src/endpoints/merchant-routes.js";
import { formRefusal } from "../../src/endpoints/request-form.js";

/**
 * One route table: the router and its 405s, the 404's list and hint, the report's wrong_base_path,
 * the express mount's paths and the OpenAPI paths are all made from MERCHANT_ROUTE_TABLE, so a route
 * added to it (as docs/architecture.md's recipe says) is everywhere, with no second list to update.
 */
const refunds: Endpoint = () => jsonResponse(200, { refunded: true });
const REFUNDS: MerchantRoute = {
  path: "/api/v2/refunds",
  name: "refunds" as EndpointName,
  methods: ["POST"],
  endpoint: refunds,
  aliases: ["refund"],
};
const TABLE: readonly MerchantRoute[] = [...MERCHANT_ROUTE_TABLE, REFUNDS];

function request(method: string, path: string): SandboxRequest {
  return { method, path, query: new URLSearchParams(), headers: {}, body: new Uint8Array() } as unknown as SandboxRequest;
}

function trace(path: string): RequestTrace {
  return { shown: { path, query: "" }, scenario: { settings: DEFAULT_SETTINGS }, body: undefined } as unknown as RequestTrace;
}

function entry(method: string, path: string): JournalEntry {
  return { id: "req_1", seq: 1, method, path, query: "", status: 404, endpoint: "unknown", scenario: "default", merchant: "m_1" } as JournalEntry;
}

describe("one route table: a route added to a copy of the table is seen everywhere", () => {
  it("the router serves it, and its 405 lists its methods in Allow", () => {
    const route = createRouter(DEFAULT_SETTINGS, true, TABLE)("/api/v2/refunds");
    expect(route.name).toBe("refunds");
    expect(route.endpoint).toBe(refunds);
    const refusal = formRefusal(route.form!, request("GET", "/api/v2/refunds"), trace("/api/v2/refunds"), 1024);
    expect(refusal).toBeInstanceOf(MethodNotAllowed);
    expect(refusal!.headers).toEqual({ allow: "POST" });
    expect(refusal!.message).toBe("GET is not allowed on /api/v2/refunds. Use POST.");
    expect(createRouter(DEFAULT_SETTINGS, true)("/api/v2/refunds").name).toBe("unknown");
  });

  it("the 404 lists it and hints at it, for another version and for an alias", () => {
    const notFound = createRouter(DEFAULT_SETTINGS, true, TABLE)("/api/v1/refunds");
    expect(notFound.name).toBe("unknown");
    const answer = (path: string) => {
      try {
        notFound.endpoint(request("POST", path), {} as never, trace(path));
      } catch (e) {
        expect(e).toBeInstanceOf(NotFound);
        return (e as NotFound).message;
      }
      throw new Error("the 404 endpoint answered");
    };
    const served =
      "This sandbox serves: POST /api/v2/auth/token, ANY /api/v2/payment/*, POST /api/v2/payment/init, ANY /api/v2/cashout/*, POST /api/login_check, GET /.well-known/jwks.json, POST /api/v2/refunds, GET /__sandbox/health.";
    expect(answer("/api/v1/refunds")).toBe(
      `No endpoint at POST /api/v1/refunds. This sandbox simulates version 2 of the API: use the /api/v2/ prefix. Did you mean /api/v2/refunds? ${served}`,
    );
    expect(answer("/merchant/refund")).toBe(`No endpoint at POST /merchant/refund. Did you mean /api/v2/refunds? ${served}`);
  });

  it("the report's wrong_base_path names it as the path meant, and lists it", () => {
    expect(apiPaths(TABLE).correct("/v2/refunds")).toBe("/api/v2/refunds");
    expect(API_PATHS.correct("/v2/refunds")).toBeUndefined();
    const [finding] = wrongBasePathOf(apiPaths(TABLE))([entry("POST", "/api/v2/api/v2/refunds"), entry("GET", "/nope")]);
    expect(finding!.message).toContain("POST /api/v2/api/v2/refunds: use /api/v2/refunds; GET /nope: no API path matches it.");
    expect(finding!.message).toContain(
      "The API serves: POST /api/v2/auth/token, ANY /api/v2/payment/*, POST /api/v2/payment/init, ANY /api/v2/cashout/*, POST /api/login_check, GET /.well-known/jwks.json, POST /api/v2/refunds.",
    );
  });

  it("an express mount keeps it as the sandbox's path", () => {
    expect(sandboxPathsOf(TABLE)("/api/v2/refunds")).toBe(true);
    expect(sandboxPathsOf(TABLE)("/api/v2/refunds/")).toBe(true);
    expect(sandboxPathsOf(MERCHANT_ROUTE_TABLE)("/api/v2/refunds")).toBe(false);
  });

  it("the OpenAPI paths list it, and refuse to leave it without prose", () => {
    const docs = { ...merchantDocs, "/api/v2/refunds": merchantDocs["/api/v2/auth/token"]! };
    const paths = pathsOf(TABLE, docs);
    expect(Object.keys(paths["/api/v2/refunds"] as object)).toContain("post");
    expect(Object.keys(paths["/api/v2/refunds"] as object)).not.toContain("get");
    expect(() => pathsOf(TABLE, merchantDocs)).toThrow("The OpenAPI document has no prose for the route /api/v2/refunds.");
  });
});
