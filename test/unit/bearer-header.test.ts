import { describe, expect, it } from "vitest";
import { bearerTokenOf, parseBearerHeader } from "../../src/core/bearer.js";
import type { SandboxRequest } from "../../src/core/http-types.js";

/**
 * The one reading of `Authorization: Bearer <token>` that the protected endpoints (readBearerToken,
 * in bearer.test.ts), the attribution of a request to its merchant and the control plane's admin
 * check share.
 */

const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtIn0.c2ln-_";

function req(authorization?: string | string[]): SandboxRequest {
  return { method: "GET", path: "/", query: "", headers: authorization === undefined ? {} : { authorization }, body: new Uint8Array(0) };
}

describe("parseBearerHeader", () => {
  it("no header is absent", () => {
    expect(parseBearerHeader(undefined)).toEqual({ kind: "absent" });
  });

  it("reads the scheme in any case, with several spaces and blanks around", () => {
    for (const value of [`Bearer ${JWT}`, `bearer ${JWT}`, `BEARER ${JWT}`, `Bearer   ${JWT}  `, `  Bearer ${JWT}`]) {
      expect(parseBearerHeader(value)).toEqual({ kind: "token", token: JWT, token68: true });
    }
  });

  it("a credential outside token68 is still read, marked as such (an admin token may be any text)", () => {
    expect(parseBearerHeader('Bearer "abc"')).toEqual({ kind: "token", token: '"abc"', token68: false });
    expect(parseBearerHeader("Bearer admin-token-with!")).toEqual({ kind: "token", token: "admin-token-with!", token68: false });
    expect(parseBearerHeader("Bearer tök")).toEqual({ kind: "token", token: "tök", token68: false });
  });

  it("Bearer with nothing after it is empty", () => {
    for (const value of ["Bearer", "Bearer ", "bearer   "]) expect(parseBearerHeader(value)).toEqual({ kind: "empty" });
  });

  it("the Bearer scheme with a tab or colon after it is a bad separator", () => {
    for (const value of ["Bearer\tabc", "Bearer:abc", "bearer:abc"]) expect(parseBearerHeader(value)).toEqual({ kind: "bad_separator" });
  });

  it("another scheme is named only when it is a short word, never when it may be the token", () => {
    expect(parseBearerHeader("Basic dXNlcjpwYXNz")).toEqual({ kind: "not_bearer", scheme: "Basic" });
    expect(parseBearerHeader("Token")).toEqual({ kind: "not_bearer", scheme: "Token" });
    for (const value of [JWT, "", "   ", "Bearer2 abc", "Bearerrrrrrrrrrrrrrrrrrrrrrr x"]) {
      expect(parseBearerHeader(value)).toEqual({ kind: "not_bearer", scheme: undefined });
    }
  });

  it("blanks inside the credential, or a repeated header joined by a comma, are not one token", () => {
    expect(parseBearerHeader("Bearer abc def")).toEqual({ kind: "blank_inside" });
    expect(parseBearerHeader(`Bearer ${JWT}, Bearer ${JWT}`)).toEqual({ kind: "blank_inside" });
  });
});

describe("bearerTokenOf", () => {
  it("gives the token of a Bearer header in any case, as the attribution and the admin check read it", () => {
    expect(bearerTokenOf(req(`Bearer ${JWT}`))).toBe(JWT);
    expect(bearerTokenOf(req(`bEaReR   ${JWT} `))).toBe(JWT);
    expect(bearerTokenOf(req("Bearer correct-horse-battery-staple!"))).toBe("correct-horse-battery-staple!");
  });

  it("gives nothing, and never throws, for anything that is not one bearer token", () => {
    for (const value of [undefined, "", "Bearer", "Bearer\tabc", "Basic abc", JWT, "Bearer a b", [`Bearer ${JWT}`, `Bearer ${JWT}`]]) {
      expect(bearerTokenOf(req(value))).toBeUndefined();
    }
  });
});
