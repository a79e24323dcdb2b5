import { describe, expect, it } from "vitest";
import { API_PATHS } from "../../src/endpoints/api-paths.js";

const correctApiPath = (path: string) => API_PATHS.correct(path);

/**
 * API_PATHS.correct: the path a client meant, shared by the 404 hint and the report's wrong_base_path.
 * One table of what real clients send with a wrong base URL or another server's names.
 */
describe("API_PATHS.correct", () => {
  it.each([
    // another version of the API
    ["/api/v1/auth/token", "/api/v2/auth/token"],
    ["/api/v3/payment/init", "/api/v2/payment/init"],
    ["/api/v1/payment/pay_123", "/api/v2/payment/pay_123"],
    ["/api/v0/login_check", "/api/login_check"],
    // a base URL that already ends in /api/v2, with the client adding /api/v2 again
    ["/api/v2/api/v2/payment/x", "/api/v2/payment/x"],
    ["/api/v2/api/v2/auth/token", "/api/v2/auth/token"],
    ["/api/v2/api/v2/cashout/transfer", "/api/v2/cashout/transfer"],
    ["/api/api/v2/auth/token", "/api/v2/auth/token"],
    // a base URL with /api missing, or a path of its own
    ["/v2/auth/token", "/api/v2/auth/token"],
    ["/v2/payment/status", "/api/v2/payment/status"],
    ["/merchant/api/v2/auth/token", "/api/v2/auth/token"],
    ["/sandbox/merchant/api/v2/payment/init", "/api/v2/payment/init"],
    ["/payment/api/v2/payment/x", "/api/v2/payment/x"],
    ["/auth/api/v2/auth/token", "/api/v2/auth/token"],
    ["/api/v2/.well-known/jwks.json", "/.well-known/jwks.json"],
    // no base path at all
    ["/auth/token", "/api/v2/auth/token"],
    ["/payment/init", "/api/v2/payment/init"],
    ["/cashout/transfer", "/api/v2/cashout/transfer"],
    ["/login_check", "/api/login_check"],
    // slashes and case
    ["/api/v2/auth/token/", "/api/v2/auth/token"],
    ["/api/v2//auth/token", "/api/v2/auth/token"],
    ["/API/V2/Auth/Token", "/api/v2/auth/token"],
    ["/API/V2/PAYMENT/INIT", "/api/v2/payment/init"],
    ["/api/login_check/", "/api/login_check"],
    ["/__sandbox/health/", "/__sandbox/health"],
    // the protected groups keep the rest as sent (ids are case-sensitive); plural names
    ["/API/V2/Payment/Pay_AbC", "/api/v2/payment/Pay_AbC"],
    ["/api/v2/payments/pay_1", "/api/v2/payment/pay_1"],
    ["/api/v2/cashouts/c_1/status", "/api/v2/cashout/c_1/status"],
    ["/api/v2/payments/init", "/api/v2/payment/init"],
    // other servers' names for the token endpoint and the JWKS
    ["/api/v2/token", "/api/v2/auth/token"],
    ["/api/v2/auth", "/api/v2/auth/token"],
    ["/api/v2/oauth/token", "/api/v2/auth/token"],
    ["/oauth2/token", "/api/v2/auth/token"],
    ["/token", "/api/v2/auth/token"],
    ["/jwks.json", "/.well-known/jwks.json"],
    ["/jwks", "/.well-known/jwks.json"],
    ["/.well-known/jwks", "/.well-known/jwks.json"],
    ["/.well-known/JWKS.json", "/.well-known/jwks.json"],
    ["/api/v2/jwks.json", "/.well-known/jwks.json"],
  ])("%s -> %s", (path, meant) => {
    expect(correctApiPath(path)).toBe(meant);
  });

  it.each([
    ["/", "nothing to go by"],
    ["/nope", "no segment names a resource"],
    ["/api/v2", "a base URL, no resource"],
    ["/api/v2/payment", "a group with no path under it"],
    ["/api/v2/auth/token/refresh", "an ending the API does not have"],
    ["/api/v2/auth/login", "an ending the API does not have"],
    ["/api/login_check/sand...(16 chars, sha256:5369724f)", "a redacted secret after the login"],
    ["/caf%C3%A9", "percent-encoded, no resource"],
    ["/__sandbox/sessions/ses_1/payment/x", "the control plane's own paths"],
    ["/__sandbox/token", "the control plane's own paths"],
  ])("%s -> none (%s)", (path) => {
    expect(correctApiPath(path)).toBeUndefined();
  });

  it("an API path already right is not a correction", () => {
    for (const path of ["/api/v2/auth/token", "/api/v2/payment/init", "/api/v2/payment/status", "/api/login_check", "/.well-known/jwks.json"]) {
      expect(correctApiPath(path)).toBeUndefined();
    }
  });

  it("every correction is a path of the API's routes", () => {
    const served = API_PATHS.routes.map((r) => r.split(" ")[1]!);
    for (const path of ["/api/v1/auth/token", "/v2/payment/init", "/jwks", "/login_check", "/api/v3/cashout/x", "/payments/p"]) {
      const meant = correctApiPath(path)!;
      expect(
        served.some((s) => s === meant || (s.endsWith("/*") && meant.startsWith(s.slice(0, -1)))),
        `${path} -> ${meant}`,
      ).toBe(true);
    }
  });
});
