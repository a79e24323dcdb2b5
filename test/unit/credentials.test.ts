import { describe, expect, it } from "vitest";
import type { CredentialPrecedence } from "../../src/core/config.js";
import { extractCredentials } from "../../src/core/credentials.js";
import { InvalidRequest } from "../../src/core/errors.js";
import type { SandboxRequest } from "../../src/core/http-types.js";

function req(headers: SandboxRequest["headers"] = {}): SandboxRequest {
  return { method: "POST", path: "/api/v2/auth/token", query: "", headers, body: new Uint8Array(0) };
}

function refusal(fn: () => unknown): { code: string; message: string; status: number } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRequest);
    const err = e as InvalidRequest;
    return { code: err.code, message: err.description, status: err.status };
  }
  throw new Error("did not throw");
}

const KEY_MISSING = 'api_key is missing. Send it as the JSON body field "api_key" (with Content-Type: application/json) or as the X-Api-Key header.';
const SECRET_MISSING =
  'api_secret is missing. Send it as the JSON body field "api_secret" (with Content-Type: application/json) or as the X-Api-Secret header.';

describe("extractCredentials", () => {
  it("both from the body", () => {
    expect(extractCredentials(req(), { api_key: "k", api_secret: "s" }, "must_match")).toEqual({
      apiKey: "k",
      apiSecret: "s",
      sources: { apiKey: "body", apiSecret: "body" },
    });
  });

  it("both from the headers", () => {
    expect(extractCredentials(req({ "x-api-key": "k", "x-api-secret": "s" }), undefined, "must_match")).toEqual({
      apiKey: "k",
      apiSecret: "s",
      sources: { apiKey: "header", apiSecret: "header" },
    });
  });

  it("each credential independently: key in a header, secret in the body, and the other way round", () => {
    expect(extractCredentials(req({ "x-api-key": "k" }), { api_secret: "s" }, "must_match")).toEqual({
      apiKey: "k",
      apiSecret: "s",
      sources: { apiKey: "header", apiSecret: "body" },
    });
    expect(extractCredentials(req({ "x-api-secret": "s" }), { api_key: "k" }, "reject_both")).toEqual({
      apiKey: "k",
      apiSecret: "s",
      sources: { apiKey: "body", apiSecret: "header" },
    });
  });

  it("ignores other body fields", () => {
    expect(extractCredentials(req(), { api_key: "k", api_secret: "s", extra: 1 }, "must_match").apiKey).toBe("k");
  });

  describe("missing", () => {
    it("no body and no headers: api_key first", () => {
      expect(refusal(() => extractCredentials(req(), undefined, "must_match"))).toEqual({
        code: "api_key_missing",
        message: KEY_MISSING,
        status: 400,
      });
    });

    it("only the key: api_secret is missing", () => {
      expect(refusal(() => extractCredentials(req(), { api_key: "k" }, "must_match"))).toEqual({
        code: "api_secret_missing",
        message: SECRET_MISSING,
        status: 400,
      });
      expect(refusal(() => extractCredentials(req({ "x-api-key": "k" }), {}, "must_match")).code).toBe("api_secret_missing");
    });

    it("sent empty, in the body or in a header, says so", () => {
      const emptyKey = KEY_MISSING.replace("api_key is missing.", "api_key is missing (it was sent empty).");
      const emptySecret = SECRET_MISSING.replace("api_secret is missing.", "api_secret is missing (it was sent empty).");
      expect(refusal(() => extractCredentials(req(), { api_key: "", api_secret: "s" }, "must_match"))).toEqual({
        code: "api_key_missing",
        message: emptyKey,
        status: 400,
      });
      expect(refusal(() => extractCredentials(req({ "x-api-key": "" }), { api_secret: "s" }, "must_match")).message).toBe(emptyKey);
      expect(refusal(() => extractCredentials(req({ "x-api-secret": "" }), { api_key: "k" }, "must_match"))).toEqual({
        code: "api_secret_missing",
        message: emptySecret,
        status: 400,
      });
    });

    it("an empty header beside a body value uses the body value", () => {
      expect(extractCredentials(req({ "x-api-key": "" }), { api_key: "k", api_secret: "s" }, "must_match")).toEqual({
        apiKey: "k",
        apiSecret: "s",
        sources: { apiKey: "body", apiSecret: "body" },
      });
    });

    it("an empty body field beside a header uses the header", () => {
      expect(extractCredentials(req({ "x-api-secret": "s" }), { api_key: "k", api_secret: "" }, "reject_both").sources).toEqual({
        apiKey: "body",
        apiSecret: "header",
      });
    });
  });

  describe("non-string body values", () => {
    it.each<[unknown, string]>([
      [42, "number"],
      [true, "boolean"],
      [null, "null"],
      [["k"], "an array"],
      [{ v: "k" }, "object"],
    ])("api_key = %j is refused as %s", (value, kind) => {
      expect(refusal(() => extractCredentials(req(), { api_key: value, api_secret: "s" }, "must_match"))).toEqual({
        code: "credential_not_string",
        message: `The body field "api_key" must be a string, but it is ${kind}. Send it as a JSON string.`,
        status: 400,
      });
    });

    it("a non-string api_secret is refused even when the header carries it", () => {
      expect(refusal(() => extractCredentials(req({ "x-api-secret": "s" }), { api_key: "k", api_secret: 1 }, "header"))).toEqual({
        code: "credential_not_string",
        message: 'The body field "api_secret" must be a string, but it is number. Send it as a JSON string.',
        status: 400,
      });
    });
  });

  it("a repeated header is refused", () => {
    expect(refusal(() => extractCredentials(req({ "x-api-key": ["k", "k"] }), { api_secret: "s" }, "must_match"))).toEqual({
      code: "credential_header_repeated",
      message: "The X-Api-Key header was sent more than once. Send it exactly once.",
      status: 400,
    });
    expect(refusal(() => extractCredentials(req({ "x-api-secret": ["s", "t"] }), { api_key: "k" }, "header"))).toEqual({
      code: "credential_header_repeated",
      message: "The X-Api-Secret header was sent more than once. Send it exactly once.",
      status: 400,
    });
  });

  describe("the same credential both ways", () => {
    it("must_match: equal values are accepted (source both)", () => {
      expect(extractCredentials(req({ "x-api-key": "k", "x-api-secret": "s" }), { api_key: "k", api_secret: "s" }, "must_match")).toEqual({
        apiKey: "k",
        apiSecret: "s",
        sources: { apiKey: "both", apiSecret: "both" },
      });
    });

    it("must_match: different values are refused, naming the conflict and not the values", () => {
      const r = refusal(() =>
        extractCredentials(req({ "x-api-secret": "header-secret" }), { api_key: "k", api_secret: "body-secret" }, "must_match"),
      );
      expect(r).toEqual({
        code: "credential_conflict",
        message:
          "api_secret was sent both in the body and in the X-Api-Secret header with different values. Send it one way only, or make both the same.",
        status: 400,
      });
      expect(r.message).not.toContain("header-secret");
      expect(r.message).not.toContain("body-secret");
      expect(refusal(() => extractCredentials(req({ "x-api-key": "a" }), { api_key: "b", api_secret: "s" }, "must_match")).message).toBe(
        "api_key was sent both in the body and in the X-Api-Key header with different values. Send it one way only, or make both the same.",
      );
    });

    it.each<[CredentialPrecedence, string, "header" | "body"]>([
      ["header", "from-header", "header"],
      ["body", "from-body", "body"],
    ])("%s precedence takes the %s value", (precedence, value, source) => {
      expect(extractCredentials(req({ "x-api-key": "from-header" }), { api_key: "from-body", api_secret: "s" }, precedence)).toEqual({
        apiKey: value,
        apiSecret: "s",
        sources: { apiKey: source, apiSecret: "body" },
      });
    });

    it("reject_both refuses even equal values", () => {
      expect(refusal(() => extractCredentials(req({ "x-api-key": "k" }), { api_key: "k", api_secret: "s" }, "reject_both"))).toEqual({
        code: "credential_sent_twice",
        message:
          "api_key was sent both in the body and in the X-Api-Key header, and this sandbox is set to reject that (credential precedence 'reject_both'). Send it one way only.",
        status: 400,
      });
      expect(refusal(() => extractCredentials(req({ "x-api-secret": "s" }), { api_key: "k", api_secret: "s" }, "reject_both")).message).toBe(
        "api_secret was sent both in the body and in the X-Api-Secret header, and this sandbox is set to reject that (credential precedence 'reject_both'). Send it one way only.",
      );
    });
  });
});
