import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { problem, serverPerDescribe } from "../support/server.js";

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
const ROUTES =
  "This sandbox serves: POST /api/v2/auth/token, ANY /api/v2/payment/*, POST /api/v2/payment/init, ANY /api/v2/cashout/*, POST /api/login_check, GET /.well-known/jwks.json, GET /__sandbox/health.";

function notFound(method: string, path: string, hint = "") {
  return problem(404, "Not Found", "not_found", `No endpoint at ${method} ${path}.${hint} ${ROUTES}`, path, "not_found");
}

describe("discovery endpoints", () => {
  const t = serverPerDescribe();

  describe("GET /__sandbox/health", () => {
    it("200 with status, the package version and the loaded scenarios", async () => {
      const r = await t().call("/__sandbox/health");
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.json).toEqual({ status: "ok", version: PACKAGE_VERSION, scenarios: ["default"] });
      expect(PACKAGE_VERSION).toBe("0.1.0");
      expect(t().sandbox.version).toBe(PACKAGE_VERSION);
    });

    it("HEAD answers 200 without a body", async () => {
      const r = await t().call("/__sandbox/health", { method: "HEAD" });
      expect(r.status).toBe(200);
      expect(r.text).toBe("");
    });

    it.each(["POST", "PUT", "DELETE"])("%s → 405 with Allow: GET, HEAD", async (method) => {
      const r = await t().call("/__sandbox/health", { method });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("GET, HEAD");
      expect(r.json).toEqual(
        problem(
          405,
          "Method Not Allowed",
          "method_not_allowed",
          `${method} is not allowed on /__sandbox/health. Use GET or HEAD.`,
          "/__sandbox/health",
          "method_not_allowed",
        ),
      );
    });
  });

  describe("GET /.well-known/jwks.json", () => {
    it("200 with exactly the one public RSA signing key, cacheable for a minute", async () => {
      const r = await t().call("/.well-known/jwks.json");
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.headers.get("cache-control")).toBe("public, max-age=60");
      expect(Object.keys(r.json)).toEqual(["keys"]);
      expect(r.json.keys).toHaveLength(1);
      const [key] = r.json.keys;
      expect(key).toEqual({
        kty: "RSA",
        n: expect.stringMatching(/^[A-Za-z0-9_-]{342}$/),
        e: "AQAB",
        kid: t().sandbox.keys.signing.kid,
        alg: "RS256",
        use: "sig",
      });
      for (const member of ["d", "p", "q", "dp", "dq", "qi", "k"]) expect(key).not.toHaveProperty(member);
    });

    it("the kid is the one in the header of issued access tokens", async () => {
      const token = await t().token();
      const header = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString("utf8"));
      expect(header.kid).toBe(t().sandbox.keys.signing.kid);
      expect((await t().call("/.well-known/jwks.json")).json.keys[0].kid).toBe(header.kid);
    });

    it("POST → 405 with Allow: GET, HEAD", async () => {
      const r = await t().call("/.well-known/jwks.json", { method: "POST" });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("GET, HEAD");
      expect(r.json).toEqual(
        problem(
          405,
          "Method Not Allowed",
          "method_not_allowed",
          "POST is not allowed on /.well-known/jwks.json. Use GET or HEAD.",
          "/.well-known/jwks.json",
          "method_not_allowed",
        ),
      );
    });
  });

  describe("unknown paths", () => {
    it("404 problem listing the routes", async () => {
      const r = await t().call("/nope");
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.headers.get("www-authenticate")).toBeNull();
      expect(r.json).toEqual(notFound("GET", "/nope"));
    });

    it("the root, and the query string is not part of the message", async () => {
      // GET / sends a browser to the QA page (test/control/qa-page.test.ts); other methods get the 404.
      expect((await t().call("/", { method: "POST" })).json).toEqual(notFound("POST", "/"));
      const r = await t().call("/nope?access_token=eyJhbGciOiJSUzI1NiJ9.e30.sig", { method: "POST" });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(notFound("POST", "/nope"));
      expect(r.text).not.toContain("eyJhbGciOiJSUzI1NiJ9");
    });

    it.each([
      ["/api/v2/auth/token/", "/api/v2/auth/token"],
      ["/api/v2/auth/token//", "/api/v2/auth/token"],
      ["/API/V2/AUTH/TOKEN", "/api/v2/auth/token"],
      ["/api/login_check/", "/api/login_check"],
      ["/.well-known/JWKS.json", "/.well-known/jwks.json"],
      ["/__sandbox/health/", "/__sandbox/health"],
    ])("%s → 404 with the 'Did you mean %s' hint", async (path, known) => {
      const r = await t().call(path, { method: "POST" });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(notFound("POST", path, ` Did you mean ${known} (exact case, no trailing slash)?`));
    });

    it.each([
      ["/api/v1/auth/token", "/api/v2/auth/token"],
      ["/api/v3/payment/init", "/api/v2/payment/init"],
      ["/api/v0/login_check", "/api/login_check"],
    ])("%s → 404 with the /api/v2/ hint, naming %s", async (path, meant) => {
      const r = await t().call(path, { method: "POST" });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(notFound("POST", path, ` This sandbox simulates version 2 of the API: use the /api/v2/ prefix. Did you mean ${meant}?`));
    });

    it.each([
      ["/api/v2/api/v2/payment/init", "/api/v2/payment/init"],
      ["/v2/auth/token", "/api/v2/auth/token"],
      ["/merchant/api/v2/auth/token", "/api/v2/auth/token"],
      ["/oauth/token", "/api/v2/auth/token"],
      ["/jwks.json", "/.well-known/jwks.json"],
    ])("%s → 404 with the 'Did you mean %s?' hint (the path the report's wrong_base_path names)", async (path, meant) => {
      const r = await t().call(path, { method: "POST" });
      expect(r.status).toBe(404);
      expect(r.json).toEqual(notFound("POST", path, ` Did you mean ${meant}?`));
    });

    it("a percent-encoded path is shown as sent, not decoded", async () => {
      const r = await t().call("/caf%C3%A9");
      expect(r.json.detail).toBe(`No endpoint at GET /caf%C3%A9. ${ROUTES}`);
    });

    it("a very long path is cut at 200 characters in the message", async () => {
      const path = "/" + "a".repeat(300);
      const r = await t().call(path);
      expect(r.status).toBe(404);
      expect(r.json.detail).toBe(`No endpoint at GET /${"a".repeat(199)}.... ${ROUTES}`);
      expect(r.json.instance).toBe(path);
    });
  });
});
