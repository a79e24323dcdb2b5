import { describe, expect, it } from "vitest";
import { assertNoTokenInQuery, readBearerToken, type BearerOptions } from "../../src/core/bearer.js";
import { InvalidRequest, MissingCredentials, SandboxError } from "../../src/core/errors.js";
import type { SandboxRequest } from "../../src/core/http-types.js";

const OPTIONS: BearerOptions = { tokenName: "access token", howToGet: "get one from POST /api/v2/auth/token" };
const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtIn0.c2ln-_";

function req(headers: SandboxRequest["headers"] = {}, query = ""): SandboxRequest {
  return { method: "GET", path: "/api/v2/payment/status", query, headers, body: new Uint8Array(0) };
}

function refusal(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SandboxError);
    const err = e as SandboxError;
    return { type: err.constructor.name, code: err.code, status: err.status, message: err.description, challenge: err.challenge };
  }
  throw new Error("did not throw");
}

const notBearer = (shown: string) => ({
  type: "InvalidRequest",
  code: "authorization_not_bearer",
  status: 400,
  message: `The Authorization header uses ${shown}, not the Bearer scheme. Send 'Authorization: Bearer <token>' with the access token.`,
  challenge: "bearer",
});

describe("readBearerToken", () => {
  it("returns the token of 'Bearer <token>'", () => {
    expect(readBearerToken(req({ authorization: `Bearer ${JWT}` }), OPTIONS)).toBe(JWT);
  });

  it("takes the scheme case-insensitively, several spaces and surrounding blanks", () => {
    expect(readBearerToken(req({ authorization: `bearer ${JWT}` }), OPTIONS)).toBe(JWT);
    expect(readBearerToken(req({ authorization: `BEARER ${JWT}` }), OPTIONS)).toBe(JWT);
    expect(readBearerToken(req({ authorization: `Bearer   ${JWT}  ` }), OPTIONS)).toBe(JWT);
    expect(readBearerToken(req({ authorization: `  Bearer ${JWT}` }), OPTIONS)).toBe(JWT);
  });

  it("accepts every token68 character, with trailing '='", () => {
    expect(readBearerToken(req({ authorization: "Bearer aZ09-._~+/==" }), OPTIONS)).toBe("aZ09-._~+/==");
    expect(readBearerToken(req({ authorization: "Bearer sandbox-payment-token" }), OPTIONS)).toBe("sandbox-payment-token");
  });

  it("no Authorization header: a bare 401 (MissingCredentials) that names the token and where to get it", () => {
    expect(refusal(() => readBearerToken(req(), OPTIONS))).toEqual({
      type: "MissingCredentials",
      code: "credentials_missing",
      status: 401,
      message: "No credentials were sent. Send the access token as 'Authorization: Bearer <token>' (get one from POST /api/v2/auth/token).",
      challenge: "bearer",
    });
    expect(() => readBearerToken(req({ authorization: undefined }), OPTIONS)).toThrow(MissingCredentials);
  });

  it("the messages use the endpoint's own token name", () => {
    const options = { tokenName: "merchant payment token", howToGet: "the payment token configured for your merchant" };
    expect(refusal(() => readBearerToken(req(), options)).message).toBe(
      "No credentials were sent. Send the merchant payment token as 'Authorization: Bearer <token>' (the payment token configured for your merchant).",
    );
    expect(refusal(() => readBearerToken(req({ authorization: "Basic abc" }), options)).message).toBe(
      "The Authorization header uses 'Basic', not the Bearer scheme. Send 'Authorization: Bearer <token>' with the merchant payment token.",
    );
  });

  it("a repeated Authorization header is refused", () => {
    expect(refusal(() => readBearerToken(req({ authorization: [`Bearer ${JWT}`, `Bearer ${JWT}`] }), OPTIONS))).toEqual({
      type: "InvalidRequest",
      code: "authorization_header_repeated",
      status: 400,
      message: "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
      challenge: "bearer",
    });
  });

  it("another scheme is named", () => {
    expect(refusal(() => readBearerToken(req({ authorization: "Basic dXNlcjpwYXNz" }), OPTIONS))).toEqual(notBearer("'Basic'"));
    expect(refusal(() => readBearerToken(req({ authorization: "Token abc" }), OPTIONS))).toEqual(notBearer("'Token'"));
    expect(refusal(() => readBearerToken(req({ authorization: "Basic" }), OPTIONS))).toEqual(notBearer("'Basic'"));
  });

  it("a value with no recognisable scheme is not echoed (it may be the token itself)", () => {
    for (const value of [JWT, "", "   ", "Bearer2 abc", "Bearerrrrrrrrrrrrrrrrrrrrrrr x"]) {
      const r = refusal(() => readBearerToken(req({ authorization: value }), OPTIONS));
      expect(r).toEqual(notBearer("no recognisable scheme"));
    }
    // The scheme is right, the separator is wrong: say so (and still echo nothing).
    for (const value of ["Bearer:abc", "Bearer\tabc"]) {
      const r = refusal(() => readBearerToken(req({ authorization: value }), OPTIONS));
      expect(r.message).toBe(
        "The Authorization header has the Bearer scheme but not a single space after it. Send 'Authorization: Bearer <token>' with the access token.",
      );
      expect(r.message).not.toContain("abc");
    }
    expect(refusal(() => readBearerToken(req({ authorization: JWT }), OPTIONS)).message).not.toContain(JWT);
  });

  it("a token with characters outside token68 is refused without echoing it", () => {
    for (const token of ['"abc"', "abc def", "a=b", "abc,def", "tök"]) {
      const r = refusal(() => readBearerToken(req({ authorization: `Bearer ${token}` }), OPTIONS));
      expect(r).toEqual({
        type: "InvalidRequest",
        code: "bearer_token_malformed",
        status: 400,
        message:
          "The bearer token contains characters a token cannot have (spaces, quotes or others outside RFC 6750's token68). Send the access token exactly as issued, with one space after 'Bearer'.",
        challenge: "bearer",
      });
      expect(r.message).not.toContain(token);
    }
  });

  // Regression test for a fixed bug (src/core/bearer.ts): `value.trim()` removes the space after "Bearer", so the regex
  // `^([A-Za-z]+) +(.*)$` never matches "Bearer" alone; the bearer_token_empty branch is unreachable
  // and the caller is told "uses 'Bearer', not the Bearer scheme", which contradicts itself.
  it.each(["Bearer", "Bearer ", "bearer   "])("%j (Bearer with no token) is bearer_token_empty", (value) => {
    expect(refusal(() => readBearerToken(req({ authorization: value }), OPTIONS))).toEqual({
      type: "InvalidRequest",
      code: "bearer_token_empty",
      status: 400,
      message: "The Authorization header says Bearer but carries no token. Send 'Authorization: Bearer <token>' with the access token.",
      challenge: "bearer",
    });
  });
});

describe("assertNoTokenInQuery", () => {
  const message = (name: string) =>
    `A token was sent in the query string ('${name}='), where it ends up in logs and browser history. Remove it from the URL and send it as 'Authorization: Bearer <token>'.`;

  it("lets a request without a query, or with other parameters, through", () => {
    expect(() => assertNoTokenInQuery(req({}, ""))).not.toThrow();
    expect(() => assertNoTokenInQuery(req({}, "page=2&tokens=3&my_token=4&access_tokenx=5"))).not.toThrow();
  });

  it.each(["access_token", "token", "jwt", "bearer"])("refuses ?%s=…, naming the parameter but not the token", (name) => {
    const r = refusal(() => assertNoTokenInQuery(req({}, `page=1&${name}=${JWT}`)));
    expect(r).toEqual({ type: "InvalidRequest", code: "token_in_query", status: 400, message: message(name), challenge: "bearer" });
    expect(r.message).not.toContain(JWT);
  });

  it("matches names case-insensitively and even without a value", () => {
    expect(refusal(() => assertNoTokenInQuery(req({}, `ACCESS_TOKEN=${JWT}`))).message).toBe(message("access_token"));
    expect(refusal(() => assertNoTokenInQuery(req({}, "access_token"))).code).toBe("token_in_query");
    expect(() => assertNoTokenInQuery(req({}, "access_token"))).toThrow(InvalidRequest);
  });

  // Regression test for a fixed bug (src/core/bearer.ts): names are compared undecoded, so `access%5Ftoken=<jwt>` (which every
  // server decodes to `access_token`) slips past the RFC 6750 rule; redact.ts does decode names.
  it("refuses a percent-encoded token parameter name", () => {
    expect(refusal(() => assertNoTokenInQuery(req({}, `access%5Ftoken=${JWT}`))).code).toBe("token_in_query");
  });
});
