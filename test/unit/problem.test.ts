import { describe, expect, it } from "vitest";
import { EMPTY_VIEW } from "../../src/core/secret-index.js";
import {
  Gone,
  InsufficientScope,
  InternalError,
  InvalidClient,
  InvalidRequest,
  InvalidToken,
  MethodNotAllowed,
  MissingCredentials,
  NotFound,
  PayloadTooLarge,
  SandboxError,
  UnsupportedMediaType,
} from "../../src/core/errors.js";
import { problemResponse, quotedStringSafe, REALM, statusTitle } from "../../src/core/problem.js";

const PATH = "/api/v2/payment/init";

function body(status: number, title: string, code: string, description: string, error?: string, instance = PATH) {
  return {
    type: `urn:merchant-sandbox:problem:${code}`,
    title,
    status,
    detail: description,
    code,
    ...(error ? { error } : {}),
    error_description: description,
    instance,
  };
}

const BASE_HEADERS = { "content-type": "application/problem+json", "cache-control": "no-store" };

describe("problemResponse", () => {
  it("InvalidRequest: 400 invalid_request, no challenge by default", () => {
    const r = problemResponse(new InvalidRequest("body_not_object", "Send an object."), PATH, EMPTY_VIEW);
    expect(r.status).toBe(400);
    expect(r.headers).toEqual(BASE_HEADERS);
    expect(JSON.parse(r.body)).toEqual(body(400, "Bad Request", "body_not_object", "Send an object.", "invalid_request"));
  });

  it("InvalidRequest with the bearer challenge: Bearer realm with error and description", () => {
    const r = problemResponse(new InvalidRequest("bearer_token_malformed", "Fix the token.", { challenge: "bearer" }), PATH, EMPTY_VIEW);
    expect(r.headers).toEqual({
      ...BASE_HEADERS,
      "www-authenticate": 'Bearer realm="merchant-api", error="invalid_request", error_description="Fix the token."',
    });
  });

  it("InvalidClient: 401 with the ApiKey challenge, or 403 by setting", () => {
    const r = problemResponse(new InvalidClient("wrong_api_secret", "Check the secret."), "/api/v2/auth/token", EMPTY_VIEW);
    expect(r.status).toBe(401);
    expect(r.headers).toEqual({ ...BASE_HEADERS, "www-authenticate": 'ApiKey realm="merchant-api", error="invalid_client"' });
    expect(JSON.parse(r.body)).toEqual(body(401, "Unauthorized", "wrong_api_secret", "Check the secret.", "invalid_client", "/api/v2/auth/token"));

    const f = problemResponse(new InvalidClient("merchant_disabled", "Disabled.", 403), "/api/v2/auth/token", EMPTY_VIEW);
    expect(f.status).toBe(403);
    expect(f.headers["www-authenticate"]).toBe('ApiKey realm="merchant-api", error="invalid_client"');
    expect(JSON.parse(f.body)).toEqual(body(403, "Forbidden", "merchant_disabled", "Disabled.", "invalid_client", "/api/v2/auth/token"));
  });

  it("MissingCredentials: 401 with a bare Bearer challenge and no error member (RFC 6750 §3.1)", () => {
    const r = problemResponse(new MissingCredentials("Send a token."), PATH, EMPTY_VIEW);
    expect(r.status).toBe(401);
    expect(r.headers).toEqual({ ...BASE_HEADERS, "www-authenticate": `Bearer realm="${REALM}"` });
    const parsed = JSON.parse(r.body);
    expect(parsed).toEqual(body(401, "Unauthorized", "credentials_missing", "Send a token."));
    expect(parsed).not.toHaveProperty("error");
  });

  it("InvalidToken: 401 invalid_token with the description in the challenge", () => {
    const r = problemResponse(new InvalidToken("token_expired", "The access token expired."), PATH, EMPTY_VIEW);
    expect(r.status).toBe(401);
    expect(r.headers).toEqual({
      ...BASE_HEADERS,
      "www-authenticate": 'Bearer realm="merchant-api", error="invalid_token", error_description="The access token expired."',
    });
    expect(JSON.parse(r.body)).toEqual(body(401, "Unauthorized", "token_expired", "The access token expired.", "invalid_token"));
  });

  it("InsufficientScope: 403 with the scope in the challenge", () => {
    const r = problemResponse(new InsufficientScope("cashout", "No cashout rights."), "/api/v2/cashout/x", EMPTY_VIEW);
    expect(r.status).toBe(403);
    expect(r.headers).toEqual({
      ...BASE_HEADERS,
      "www-authenticate": 'Bearer realm="merchant-api", error="insufficient_scope", error_description="No cashout rights.", scope="cashout"',
    });
    expect(JSON.parse(r.body)).toEqual(body(403, "Forbidden", "insufficient_scope", "No cashout rights.", "insufficient_scope", "/api/v2/cashout/x"));
  });

  it("MethodNotAllowed: 405 with Allow", () => {
    const r = problemResponse(new MethodNotAllowed("GET", PATH, ["POST"]), PATH, EMPTY_VIEW);
    expect(r.status).toBe(405);
    expect(r.headers).toEqual({ ...BASE_HEADERS, allow: "POST" });
    expect(JSON.parse(r.body)).toEqual(
      body(405, "Method Not Allowed", "method_not_allowed", "GET is not allowed on /api/v2/payment/init. Use POST.", "method_not_allowed"),
    );
    const two = problemResponse(new MethodNotAllowed("PUT", "/x", ["GET", "HEAD"]), "/x", EMPTY_VIEW);
    expect(two.headers.allow).toBe("GET, HEAD");
    expect(JSON.parse(two.body).detail).toBe("PUT is not allowed on /x. Use GET or HEAD.");
  });

  it.each<[SandboxError, number, string, string, string]>([
    [new UnsupportedMediaType("Send JSON."), 415, "Unsupported Media Type", "unsupported_media_type", "unsupported_media_type"],
    [new PayloadTooLarge("Too big."), 413, "Content Too Large", "payload_too_large", "payload_too_large"],
    [new NotFound("Nothing here."), 404, "Not Found", "not_found", "not_found"],
    [new Gone("login_gone", "Removed."), 410, "Gone", "login_gone", "gone"],
    [new InternalError("Our bug."), 500, "Internal Server Error", "internal_error", "server_error"],
  ])("%s → %d", (err, status, title, code, error) => {
    const r = problemResponse(err, PATH, EMPTY_VIEW);
    expect(r.status).toBe(status);
    expect(r.headers).toEqual(BASE_HEADERS);
    expect(JSON.parse(r.body)).toEqual(body(status, title, code, err.description, error));
  });

  it("Gone keeps extra headers from its init", () => {
    const r = problemResponse(new Gone("login_gone", "Removed.", { headers: { link: "</x>; rel=successor-version" } }), PATH, EMPTY_VIEW);
    expect(r.headers).toEqual({ ...BASE_HEADERS, link: "</x>; rel=successor-version" });
  });

  it("adds the route's extra headers, and the error's own headers win over them", () => {
    const r = problemResponse(new MethodNotAllowed("GET", "/api/login_check", ["POST"]), "/api/login_check", EMPTY_VIEW, {
      deprecation: "@1735689600",
      allow: "GET",
    });
    expect(r.headers).toEqual({ ...BASE_HEADERS, deprecation: "@1735689600", allow: "POST" });
  });

  it("an unknown thrown value becomes a 500 internal_error that does not echo its message", () => {
    const secret = "db password is hunter2-sandbox-api-secret";
    for (const thrown of [new Error(secret), new TypeError(secret), secret, { message: secret }, undefined, null]) {
      const r = problemResponse(thrown, PATH, EMPTY_VIEW);
      expect(r.status).toBe(500);
      expect(r.headers).toEqual(BASE_HEADERS);
      expect(r.body).not.toContain("hunter2");
      expect(JSON.parse(r.body)).toEqual(
        body(
          500,
          "Internal Server Error",
          "internal_error",
          "The sandbox failed to handle this request. This is a bug in merchant-sandbox, not in your request; the server log has the details.",
          "server_error",
        ),
      );
    }
  });

  it("the challenge cannot be split or broken by the description", () => {
    const r = problemResponse(new InvalidToken("token_malformed", 'bad "token"\r\nSet-Cookie: x=1\\'), PATH, EMPTY_VIEW);
    const challenge = r.headers["www-authenticate"]!;
    expect(challenge).toBe('Bearer realm="merchant-api", error="invalid_token", error_description="bad \'token\'??Set-Cookie: x=1?"');
    expect(challenge).not.toMatch(/[\r\n]/);
  });
});

describe("quotedStringSafe", () => {
  it("keeps printable ASCII other than quote and backslash", () => {
    const printable = "Send 'Authorization: Bearer <token>' (see /api/v2/auth/token)! ~#$%&*+,-./:;=?@[]^_`{|}";
    expect(quotedStringSafe(printable)).toBe(printable);
  });

  it("replaces CR, LF and other control characters with '?'", () => {
    expect(quotedStringSafe("a\r\nb\tc\u0000d\u007fe")).toBe("a??b?c?d?e");
  });

  it("replaces double quotes with single quotes and backslashes with '?'", () => {
    expect(quotedStringSafe('say "hi"\\')).toBe("say 'hi'?");
  });

  it("replaces non-ASCII characters", () => {
    expect(quotedStringSafe("Tök €")).toBe("T?k ?");
  });
});

describe("statusTitle", () => {
  it("names known statuses and falls back to Error", () => {
    expect(statusTitle(429)).toBe("Too Many Requests");
    expect(statusTitle(503)).toBe("Service Unavailable");
    expect(statusTitle(418)).toBe("Error");
  });
});

describe("SandboxError", () => {
  it("the error's name is its class name and its message is the description", () => {
    const e = new InvalidToken("token_expired", "Expired.");
    expect(e).toBeInstanceOf(SandboxError);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("InvalidToken");
    expect(e.message).toBe("Expired.");
    expect(e.code).toBe("token_expired");
  });
});
