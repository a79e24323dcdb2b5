import { internalsOf } from "../../src/app/internals.js";
import { redact } from "../../src/core/redact.js";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import type { MerchantInput } from "../../src/core/merchants.js";
import {
  DEFAULT_KEY,
  DEFAULT_MERCHANT_ID,
  DEFAULT_PAYMENT_TOKEN,
  DEFAULT_SECRET,
  T0,
  postJson,
  requestWithRepeatedHeaders,
  problem,
  serverPerDescribe,
  type Reply,
} from "../support/server.js";
import { AUDIENCE, ISSUER, expectNotEchoed, expectProblem } from "../support/expect.js";

/**
 * Black-box tests of POST /api/v2/auth/token (docs/behaviour.md,
 * "POST /api/v2/auth/token"), through the real node:http server, with exact statuses, headers and bodies.
 */

const TOKEN_PATH = "/api/v2/auth/token";
const IAT = T0 / 1000;
/** A distinctive wrong secret: it must never come back in any refusal. */
const WRONG_SECRET = "wr0ng-Secret-7f3a9c-never-echo";
const API_KEY_CHALLENGE = 'ApiKey realm="merchant-api", error="invalid_client"';

const MISSING_KEY = 'api_key is missing. Send it as the JSON body field "api_key" (with Content-Type: application/json) or as the X-Api-Key header.';
const BASIC_NOT_ACCEPTED = (field: string) =>
  `${field} is missing: the request sent HTTP Basic credentials (Authorization: Basic, what curl -u sends), which this endpoint does not accept. Send api_key and api_secret as the JSON body {"api_key": "...", "api_secret": "..."} with Content-Type: application/json, or as the X-Api-Key and X-Api-Secret headers.`;
const MISSING_KEY_EMPTY =
  'api_key is missing (it was sent empty). Send it as the JSON body field "api_key" (with Content-Type: application/json) or as the X-Api-Key header.';
const MISSING_SECRET =
  'api_secret is missing. Send it as the JSON body field "api_secret" (with Content-Type: application/json) or as the X-Api-Secret header.';
const MISSING_SECRET_EMPTY =
  'api_secret is missing (it was sent empty). Send it as the JSON body field "api_secret" (with Content-Type: application/json) or as the X-Api-Secret header.';
const WRONG_SECRET_MESSAGE =
  "The api_secret does not match the api_key 'sandbox-api-key'. Check that the secret belongs to this key and was not rotated.";
/** The unknown value is shown only redacted (it may be a swapped secret); the loaded keys are public. */
const unknownKeyMessage = (sent: string, loaded = "loaded: 'sandbox-api-key'") =>
  `The api_key ${redact(sent)} is not known to this sandbox. Use the api_key of a loaded merchant (${loaded}), and check that api_key and api_secret are not swapped.`;
const unsupportedTypeMessage = (shown: string) =>
  `POST /api/v2/auth/token takes a JSON body, but the request says Content-Type: ${shown}. Send the body as JSON with the header 'Content-Type: application/json'.`;
const formEncodedMessage = (mediaType: string) =>
  `POST /api/v2/auth/token takes a JSON body, but this one is form-encoded (Content-Type: ${mediaType}). Send the fields as a JSON object instead, with the header 'Content-Type: application/json': {"api_key": "...", "api_secret": "..."}.`;
const tooLargeMessage = (limit: number) => `The request body is larger than ${limit} bytes. Send only the fields the endpoint expects.`;
const notStringMessage = (field: string, kind: string) => `The body field "${field}" must be a string, but it is ${kind}. Send it as a JSON string.`;

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  405: "Method Not Allowed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
};

/** The secrets used in this file (and the payment token): none may appear in a refusal's body or headers. */
function expectNoSecret(reply: Reply, extra: string[] = []): void {
  expectNotEchoed(reply, [WRONG_SECRET, DEFAULT_SECRET, DEFAULT_PAYMENT_TOKEN, ...extra]);
}

interface ExpectedProblem {
  status: number;
  code: string;
  error: string;
  description: string;
  wwwAuthenticate?: string;
  allow?: string;
}

/** Exact status, problem+json headers (the challenge and Allow, or their absence) and body of a refusal that echoes no secret. */
function expectRefusal(reply: Reply, p: ExpectedProblem): void {
  expectProblem(reply, problem(p.status, TITLES[p.status]!, p.code, p.description, TOKEN_PATH, p.error), {
    headers: { "www-authenticate": p.wwwAuthenticate ?? null, allow: p.allow ?? null },
    notEchoed: [WRONG_SECRET, DEFAULT_SECRET, DEFAULT_PAYMENT_TOKEN],
  });
}

function invalidRequest(code: string, description: string): ExpectedProblem {
  return { status: 400, code, error: "invalid_request", description };
}

function invalidClient(code: string, description: string, status = 401): ExpectedProblem {
  return { status, code, error: "invalid_client", description, wwwAuthenticate: API_KEY_CHALLENGE };
}

interface ExpectedToken {
  alg?: string;
  ttl?: number;
  kid: string;
  sub?: string;
  clientId?: string;
  scope?: string;
}

/** Exact 200 token response, and the exact header and claims of the JWT inside. Returns the token. */
function expectToken(reply: Reply, t: ExpectedToken): string {
  const ttl = t.ttl ?? 3600;
  expect(reply.status).toBe(200);
  expect(reply.headers.get("content-type")).toBe("application/json");
  expect(reply.headers.get("cache-control")).toBe("no-store");
  expect(reply.headers.get("pragma")).toBe("no-cache");
  expect(reply.headers.get("www-authenticate")).toBeNull();
  expect(reply.json).toEqual({ access_token: expect.any(String), token_type: "Bearer", expires_in: ttl });
  const token = reply.json.access_token as string;
  expect(decodeProtectedHeader(token)).toEqual({ alg: t.alg ?? "RS256", typ: "at+jwt", kid: t.kid });
  const claims = decodeJwt(token);
  expect(claims).toEqual({
    iss: ISSUER,
    sub: t.sub ?? DEFAULT_MERCHANT_ID,
    aud: AUDIENCE,
    iat: IAT,
    exp: IAT + ttl,
    jti: expect.any(String),
    client_id: t.clientId ?? DEFAULT_KEY,
    scope: t.scope ?? "payment cashout",
  });
  expect(claims.exp! - claims.iat!).toBe(ttl);
  expect(claims.jti).not.toBe("");
  return token;
}

const validBody = { api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET };

function post(body: BodyInit | undefined, headers: Record<string, string> = {}): RequestInit {
  return { method: "POST", headers, ...(body === undefined ? {} : { body }) };
}

/** A JSON body of exactly `size` bytes that holds valid credentials (padding in an extra field). */
function paddedJson(size: number): string {
  const head = JSON.stringify({ ...validBody, padding: "" });
  const body = head.slice(0, -2) + "x".repeat(size - head.length) + '"}';
  expect(Buffer.byteLength(body)).toBe(size);
  return body;
}

describe("POST /api/v2/auth/token: a successful exchange (default settings)", () => {
  const s = serverPerDescribe();

  it("exchanges api_key and api_secret from the JSON body for a Bearer token: 200, no-store, no-cache, expires_in 3600", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("issues an RS256 at+jwt whose kid is the sandbox signing key and whose claims are iss, sub, aud, iat = T0, exp = iat + 3600, jti, client_id, scope", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody));
    const token = expectToken(r, { kid: s().sandbox.keys.signing.kid });
    const header = decodeProtectedHeader(token);
    expect(header.alg).toBe("RS256");
    expect(header.typ).toBe("at+jwt");
    expect(header.kid).toBe(s().sandbox.keys.signing.kid);
    const claims = decodeJwt(token);
    expect(claims.iat).toBe(T0 / 1000);
    expect(claims.exp).toBe(T0 / 1000 + 3600);
    expect(typeof claims.jti).toBe("string");
  });

  it("gives every issued token its own jti", async () => {
    const a = decodeJwt((await s().call(TOKEN_PATH, postJson(validBody))).json.access_token);
    const b = decodeJwt((await s().call(TOKEN_PATH, postJson(validBody))).json.access_token);
    expect(a.jti).not.toBe(b.jti);
  });

  it("issues a token that the payment group accepts (GET /api/v2/payment/x → 200)", async () => {
    const token = expectToken(await s().call(TOKEN_PATH, postJson(validBody)), { kid: s().sandbox.keys.signing.kid });
    const r = await s().call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
  });
});

describe("POST /api/v2/auth/token: each credential may come from the JSON body or from its X-Api-Key / X-Api-Secret header", () => {
  const s = serverPerDescribe();

  it("accepts both credentials in headers with no body and no Content-Type", async () => {
    const r = await s().call(TOKEN_PATH, post(undefined, { "x-api-key": DEFAULT_KEY, "x-api-secret": DEFAULT_SECRET }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("accepts both credentials in headers with Content-Type: application/json and an empty body", async () => {
    const r = await s().call(TOKEN_PATH, post("", { "content-type": "application/json", "x-api-key": DEFAULT_KEY, "x-api-secret": DEFAULT_SECRET }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("accepts the key in X-Api-Key and the secret in the body", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_secret: DEFAULT_SECRET }, { "x-api-key": DEFAULT_KEY }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("accepts the key in the body and the secret in X-Api-Secret", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY }, { "x-api-secret": DEFAULT_SECRET }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });
});

describe("POST /api/v2/auth/token: the same credential in body and header, precedence must_match (default)", () => {
  const s = serverPerDescribe();

  it("accepts equal values in both places", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody, { "x-api-key": DEFAULT_KEY, "x-api-secret": DEFAULT_SECRET }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("refuses different api_key values with 400 credential_conflict", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody, { "x-api-key": "other-api-key" }));
    expectRefusal(
      r,
      invalidRequest(
        "credential_conflict",
        "api_key was sent both in the body and in the X-Api-Key header with different values. Send it one way only, or make both the same.",
      ),
    );
  });

  it("refuses different api_secret values with 400 credential_conflict, without echoing either secret", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody, { "x-api-secret": WRONG_SECRET }));
    expectRefusal(
      r,
      invalidRequest(
        "credential_conflict",
        "api_secret was sent both in the body and in the X-Api-Secret header with different values. Send it one way only, or make both the same.",
      ),
    );
  });
});

describe("POST /api/v2/auth/token: credentialPrecedence 'header' uses the header when a credential comes both ways", () => {
  const s = serverPerDescribe({ credentialPrecedence: "header" });

  it("uses X-Api-Key over a different body api_key (200)", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ ...validBody, api_key: "other-api-key" }, { "x-api-key": DEFAULT_KEY }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("uses X-Api-Secret over a different body api_secret (200)", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ ...validBody, api_secret: WRONG_SECRET }, { "x-api-secret": DEFAULT_SECRET }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("so a wrong X-Api-Secret wins over the right body secret: 401 wrong_api_secret", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody, { "x-api-secret": WRONG_SECRET }));
    expectRefusal(r, invalidClient("wrong_api_secret", WRONG_SECRET_MESSAGE));
  });
});

describe("POST /api/v2/auth/token: credentialPrecedence 'body' uses the body when a credential comes both ways", () => {
  const s = serverPerDescribe({ credentialPrecedence: "body" });

  it("uses the body api_secret over a different X-Api-Secret (200)", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody, { "x-api-secret": WRONG_SECRET }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("so a wrong body api_key wins over the right X-Api-Key: 401 unknown_api_key", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ ...validBody, api_key: "other-api-key" }, { "x-api-key": DEFAULT_KEY }));
    expectRefusal(r, invalidClient("unknown_api_key", unknownKeyMessage("other-api-key")));
  });
});

describe("POST /api/v2/auth/token: credentialPrecedence 'reject_both' refuses a credential sent both ways", () => {
  const s = serverPerDescribe({ credentialPrecedence: "reject_both" });

  it("refuses api_key in body and header, even with equal values: 400 credential_sent_twice", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody, { "x-api-key": DEFAULT_KEY }));
    expectRefusal(
      r,
      invalidRequest(
        "credential_sent_twice",
        "api_key was sent both in the body and in the X-Api-Key header, and this sandbox is set to reject that (credential precedence 'reject_both'). Send it one way only.",
      ),
    );
  });

  it("refuses api_secret in body and header: 400 credential_sent_twice", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody, { "x-api-secret": DEFAULT_SECRET }));
    expectRefusal(
      r,
      invalidRequest(
        "credential_sent_twice",
        "api_secret was sent both in the body and in the X-Api-Secret header, and this sandbox is set to reject that (credential precedence 'reject_both'). Send it one way only.",
      ),
    );
  });

  it("still accepts each credential sent one way only", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY }, { "x-api-secret": DEFAULT_SECRET }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });
});

describe("POST /api/v2/auth/token: a missing, empty or non-string credential is 400 invalid_request naming it and both ways to send it", () => {
  const s = serverPerDescribe();

  it("refuses an empty JSON object: api_key_missing", async () => {
    expectRefusal(await s().call(TOKEN_PATH, postJson({})), invalidRequest("api_key_missing", MISSING_KEY));
  });

  it("refuses a request with no body and no credential headers: api_key_missing", async () => {
    expectRefusal(await s().call(TOKEN_PATH, post(undefined)), invalidRequest("api_key_missing", MISSING_KEY));
  });

  it("HTTP Basic (curl -u key:secret -X POST): api_key_missing that says Basic is not accepted and shows both ways, never the decoded credentials", async () => {
    const basic = Buffer.from(`${DEFAULT_KEY}:${DEFAULT_SECRET}`).toString("base64");
    for (const scheme of ["Basic", "basic"]) {
      const r = await s().call(TOKEN_PATH, post(undefined, { authorization: `${scheme} ${basic}` }));
      expectRefusal(r, invalidRequest("api_key_missing", BASIC_NOT_ACCEPTED("api_key")));
      expect(r.text).not.toContain(DEFAULT_KEY);
      expect(r.text).not.toContain(basic);
      expect([...r.headers.values()].join("\n")).not.toContain(DEFAULT_KEY);
    }
    // With the key sent the right way, the secret still missing: the same words for it.
    const onlyKey = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY }, { authorization: `Basic ${basic}` }));
    expectRefusal(onlyKey, invalidRequest("api_secret_missing", BASIC_NOT_ACCEPTED("api_secret")));
    // Basic beside credentials sent the right way is ignored.
    expect((await s().call(TOKEN_PATH, postJson(validBody, { authorization: `Basic ${basic}` }))).status).toBe(200);
  });

  it("refuses a missing api_key when only api_secret is sent: api_key_missing", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_secret: WRONG_SECRET }));
    expectRefusal(r, invalidRequest("api_key_missing", MISSING_KEY));
  });

  it("refuses a missing api_secret: api_secret_missing", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY }));
    expectRefusal(r, invalidRequest("api_secret_missing", MISSING_SECRET));
  });

  it("refuses an empty api_key string, saying it was sent empty", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: "", api_secret: DEFAULT_SECRET }));
    expectRefusal(r, invalidRequest("api_key_missing", MISSING_KEY_EMPTY));
  });

  it("refuses an empty api_secret string, saying it was sent empty", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY, api_secret: "" }));
    expectRefusal(r, invalidRequest("api_secret_missing", MISSING_SECRET_EMPTY));
  });

  it("refuses an empty X-Api-Key header with no body, saying it was sent empty", async () => {
    const r = await s().call(TOKEN_PATH, post(undefined, { "x-api-key": "", "x-api-secret": DEFAULT_SECRET }));
    expectRefusal(r, invalidRequest("api_key_missing", MISSING_KEY_EMPTY));
  });

  it("refuses an empty X-Api-Secret header with no body, saying it was sent empty", async () => {
    const r = await s().call(TOKEN_PATH, post(undefined, { "x-api-key": DEFAULT_KEY, "x-api-secret": "" }));
    expectRefusal(r, invalidRequest("api_secret_missing", MISSING_SECRET_EMPTY));
  });

  it.each([
    ["a number", 12345, "number"],
    ["null", null, "null"],
    ["an object", { value: DEFAULT_KEY }, "object"],
    ["an array", [DEFAULT_KEY], "an array"],
    ["a boolean", true, "boolean"],
  ])("refuses api_key that is %s: credential_not_string", async (_label, value, kind) => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: value, api_secret: DEFAULT_SECRET }));
    expectRefusal(r, invalidRequest("credential_not_string", notStringMessage("api_key", kind)));
  });

  it.each([
    ["a number", 12345, "number"],
    ["null", null, "null"],
    ["an object", { value: WRONG_SECRET }, "object"],
  ])("refuses api_secret that is %s: credential_not_string, without echoing it", async (_label, value, kind) => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY, api_secret: value }));
    expectRefusal(r, invalidRequest("credential_not_string", notStringMessage("api_secret", kind)));
  });

  it("refuses a non-string body api_key even when X-Api-Key is given", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: 1, api_secret: DEFAULT_SECRET }, { "x-api-key": DEFAULT_KEY }));
    expectRefusal(r, invalidRequest("credential_not_string", notStringMessage("api_key", "number")));
  });

  it("refuses an X-Api-Key header sent twice: credential_header_repeated", async () => {
    const r = await requestWithRepeatedHeaders(
      s().url,
      TOKEN_PATH,
      { "content-type": "application/json", "x-api-key": [DEFAULT_KEY, DEFAULT_KEY] },
      {
        method: "POST",
        body: JSON.stringify({ api_secret: DEFAULT_SECRET }),
      },
    );
    expectRefusal(r, invalidRequest("credential_header_repeated", "The X-Api-Key header was sent more than once. Send it exactly once."));
  });

  it("refuses an X-Api-Secret header sent twice: credential_header_repeated, without echoing either value", async () => {
    const r = await requestWithRepeatedHeaders(
      s().url,
      TOKEN_PATH,
      { "content-type": "application/json", "x-api-secret": [DEFAULT_SECRET, WRONG_SECRET] },
      {
        method: "POST",
        body: JSON.stringify({ api_key: DEFAULT_KEY }),
      },
    );
    expectRefusal(r, invalidRequest("credential_header_repeated", "The X-Api-Secret header was sent more than once. Send it exactly once."));
  });
});

describe("POST /api/v2/auth/token: a JSON body that does not parse or is not an object is 400 invalid_request", () => {
  const s = serverPerDescribe();
  const json = { "content-type": "application/json" };
  const EXAMPLE = 'Send a JSON object such as {"api_key": "...", "api_secret": "..."}.';

  it("refuses malformed JSON, giving the syntax error position (unquoted property name)", async () => {
    const r = await s().call(TOKEN_PATH, post("{api_key: 1}", json));
    expectRefusal(r, invalidRequest("body_malformed_json", `The request body is not valid JSON (syntax error at position 1). ${EXAMPLE}`));
  });

  it("refuses malformed JSON, giving the syntax error position (trailing comma)", async () => {
    const r = await s().call(TOKEN_PATH, post('{"api_key":"a",}', json));
    expectRefusal(r, invalidRequest("body_malformed_json", `The request body is not valid JSON (syntax error at position 15). ${EXAMPLE}`));
  });

  it("refuses truncated JSON that holds a secret without quoting any of the input", async () => {
    const body = `{"api_key": "${DEFAULT_KEY}", "api_secret": "${WRONG_SECRET}"`;
    const r = await s().call(TOKEN_PATH, post(body, json));
    expectRefusal(
      r,
      invalidRequest("body_malformed_json", `The request body is not valid JSON (syntax error at position ${body.length}). ${EXAMPLE}`),
    );
  });

  it("refuses JSON whose parser error gives no position, without quoting the input", async () => {
    const r = await s().call(TOKEN_PATH, post(`{"api_secret": ${WRONG_SECRET}}`, json));
    expectRefusal(r, invalidRequest("body_malformed_json", `The request body is not valid JSON. ${EXAMPLE}`));
  });

  it.each([
    ["an array", JSON.stringify([validBody]), "an array"],
    ["a number", "42", "a number"],
    ["null", "null", "null"],
    ["a string", JSON.stringify(WRONG_SECRET), "a string"],
    ["a boolean", "true", "a boolean"],
  ])("refuses a JSON body that is %s: body_not_object", async (_label, body, kind) => {
    const r = await s().call(TOKEN_PATH, post(body, json));
    expectRefusal(r, invalidRequest("body_not_object", `The request body is ${kind}; POST /api/v2/auth/token takes a JSON object.`));
  });

  it("refuses a body that is not valid UTF-8: body_not_utf8", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"a":"\xff\xfe"}
    const r = await s().call(TOKEN_PATH, post(bytes, json));
    expectRefusal(r, invalidRequest("body_not_utf8", "The request body is not valid UTF-8. Send the JSON body encoded as UTF-8."));
  });
});

describe("POST /api/v2/auth/token: a body must be declared as JSON (415 otherwise); JSON media types with parameters or +json work", () => {
  const s = serverPerDescribe();

  it("refuses a text/plain body with 415", async () => {
    const r = await s().call(TOKEN_PATH, post("api_key sandbox-api-key", { "content-type": "text/plain" }));
    expectRefusal(r, {
      status: 415,
      code: "unsupported_media_type",
      error: "unsupported_media_type",
      description: unsupportedTypeMessage("text/plain"),
    });
  });

  it("refuses even a JSON text declared as text/plain with 415", async () => {
    const r = await s().call(TOKEN_PATH, post(JSON.stringify(validBody), { "content-type": "text/plain;charset=UTF-8" }));
    expectRefusal(r, {
      status: 415,
      code: "unsupported_media_type",
      error: "unsupported_media_type",
      description: unsupportedTypeMessage("text/plain;charset=UTF-8"),
    });
  });

  it("refuses an application/x-www-form-urlencoded body with 415 that says it is form-encoded and shows the JSON, without echoing the secret in it", async () => {
    const form = `api_key=${DEFAULT_KEY}&api_secret=${WRONG_SECRET}`;
    const r = await s().call(TOKEN_PATH, post(form, { "content-type": "application/x-www-form-urlencoded" }));
    expectRefusal(r, {
      status: 415,
      code: "unsupported_media_type",
      error: "unsupported_media_type",
      description: formEncodedMessage("application/x-www-form-urlencoded"),
    });
  });

  it("an OAuth client's form (grant_type=client_credentials, charset parameter) and multipart/form-data get the same 415", async () => {
    const oauth = `grant_type=client_credentials&client_id=${DEFAULT_KEY}&client_secret=${WRONG_SECRET}`;
    const r = await s().call(TOKEN_PATH, post(oauth, { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" }));
    expectRefusal(r, {
      status: 415,
      code: "unsupported_media_type",
      error: "unsupported_media_type",
      description: formEncodedMessage("application/x-www-form-urlencoded"),
    });
    const multipart = new FormData();
    multipart.set("api_key", DEFAULT_KEY);
    multipart.set("api_secret", WRONG_SECRET);
    expectRefusal(await s().call(TOKEN_PATH, { method: "POST", body: multipart }), {
      status: 415,
      code: "unsupported_media_type",
      error: "unsupported_media_type",
      description: formEncodedMessage("multipart/form-data"),
    });
  });

  it("refuses a body sent without any Content-Type with 415", async () => {
    const r = await s().call(TOKEN_PATH, post(new TextEncoder().encode(JSON.stringify(validBody))));
    expectRefusal(r, {
      status: 415,
      code: "unsupported_media_type",
      error: "unsupported_media_type",
      description: unsupportedTypeMessage("(none)"),
    });
  });

  it.each([
    ["application/json; charset=utf-8"],
    ["application/vnd.api+json"],
    ["Application/JSON"],
  ])("accepts Content-Type: %s", async (contentType) => {
    const r = await s().call(TOKEN_PATH, post(JSON.stringify(validBody), { "content-type": contentType }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });
});

describe("POST /api/v2/auth/token: any other method is 405 with Allow: POST", () => {
  const s = serverPerDescribe();

  it.each([["GET"], ["PUT"], ["DELETE"], ["PATCH"]])("refuses %s with 405 and Allow: POST", async (method) => {
    const init: RequestInit = method === "GET" || method === "DELETE" ? { method } : { ...postJson(validBody), method };
    const r = await s().call(TOKEN_PATH, init);
    expectRefusal(r, {
      status: 405,
      code: "method_not_allowed",
      error: "method_not_allowed",
      description: `${method} is not allowed on /api/v2/auth/token. Use POST.`,
      allow: "POST",
    });
  });
});

describe("POST /api/v2/auth/token: a body over the limit (64 KiB by default) is 413, and the sandbox keeps answering", () => {
  const s = serverPerDescribe();

  it("accepts a body of exactly 64 KiB", async () => {
    const r = await s().call(TOKEN_PATH, post(paddedJson(64 * 1024), { "content-type": "application/json" }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("refuses a body of 64 KiB + 1 byte with 413", async () => {
    const r = await s().call(TOKEN_PATH, post(paddedJson(64 * 1024 + 1), { "content-type": "application/json" }));
    expectRefusal(r, {
      status: 413,
      code: "payload_too_large",
      error: "payload_too_large",
      description: tooLargeMessage(65536),
    });
  });

  it("refuses a 70 KB body that holds a wrong secret with 413, without echoing it", async () => {
    const body = JSON.stringify({ api_key: DEFAULT_KEY, api_secret: WRONG_SECRET, padding: "y".repeat(70_000) });
    const r = await s().call(TOKEN_PATH, post(body, { "content-type": "application/json" }));
    expectRefusal(r, {
      status: 413,
      code: "payload_too_large",
      error: "payload_too_large",
      description: tooLargeMessage(65536),
    });
  });

  it("refuses an oversized body with 413 even when it is not declared as JSON (size is checked first)", async () => {
    const r = await s().call(TOKEN_PATH, post("z".repeat(70_000), { "content-type": "text/plain" }));
    expectRefusal(r, {
      status: 413,
      code: "payload_too_large",
      error: "payload_too_large",
      description: tooLargeMessage(65536),
    });
  });

  it("answers a normal exchange after the 413s", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });
});

describe("POST /api/v2/auth/token: maxBodyBytes 1024 moves the 413 limit", () => {
  const s = serverPerDescribe({ maxBodyBytes: 1024 });

  it("accepts a body of exactly 1024 bytes", async () => {
    const r = await s().call(TOKEN_PATH, post(paddedJson(1024), { "content-type": "application/json" }));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });

  it("refuses a 2 KB body with 413 naming the 1024-byte limit", async () => {
    const r = await s().call(TOKEN_PATH, post(paddedJson(2048), { "content-type": "application/json" }));
    expectRefusal(r, {
      status: 413,
      code: "payload_too_large",
      error: "payload_too_large",
      description: tooLargeMessage(1024),
    });
  });

  it("answers a normal exchange after the 413", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody));
    expectToken(r, { kid: s().sandbox.keys.signing.kid });
  });
});

describe("POST /api/v2/auth/token: an unknown api_key or a wrong api_secret is 401 invalid_client with an ApiKey challenge", () => {
  const s = serverPerDescribe();

  it("refuses an unknown api_key with 401 unknown_api_key", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: "unknown-api-key", api_secret: WRONG_SECRET }));
    expectRefusal(r, invalidClient("unknown_api_key", unknownKeyMessage("unknown-api-key")));
  });

  it("refuses an unknown X-Api-Key header the same way", async () => {
    const r = await s().call(TOKEN_PATH, post(undefined, { "x-api-key": "unknown-api-key", "x-api-secret": DEFAULT_SECRET }));
    expectRefusal(r, invalidClient("unknown_api_key", unknownKeyMessage("unknown-api-key")));
  });

  it("shows an over-long unknown api_key only redacted (first 4 characters, length, hash)", async () => {
    const key = "k".repeat(100);
    const r = await s().call(TOKEN_PATH, postJson({ api_key: key, api_secret: DEFAULT_SECRET }));
    expectRefusal(r, invalidClient("unknown_api_key", unknownKeyMessage("k".repeat(100))));
  });

  it("refuses a wrong api_secret in the body with 401 wrong_api_secret", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY, api_secret: WRONG_SECRET }));
    expectRefusal(r, invalidClient("wrong_api_secret", WRONG_SECRET_MESSAGE));
  });

  it("refuses a wrong X-Api-Secret header with 401 wrong_api_secret", async () => {
    const r = await s().call(TOKEN_PATH, post(undefined, { "x-api-key": DEFAULT_KEY, "x-api-secret": WRONG_SECRET }));
    expectRefusal(r, invalidClient("wrong_api_secret", WRONG_SECRET_MESSAGE));
  });

  it("refuses a secret that differs from the right one only by its last character", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET.slice(0, -1) + "X" }));
    expectRefusal(r, invalidClient("wrong_api_secret", WRONG_SECRET_MESSAGE));
  });

  // docs/configuration.md, "Logs and secrets": an api_secret (or a payment token) never appears in clear in an error message.
  // Swapping the two fields is a common integration mistake; the secret then arrives as api_key.
  it.each([
    ["api_key and api_secret swapped (the secret sent as api_key)", { api_key: DEFAULT_SECRET, api_secret: DEFAULT_KEY }, DEFAULT_SECRET],
    ["the merchant payment token sent as api_key", { api_key: DEFAULT_PAYMENT_TOKEN, api_secret: DEFAULT_SECRET }, DEFAULT_PAYMENT_TOKEN],
  ])("refuses %s with 401 unknown_api_key without echoing that secret", async (_label, body, secret) => {
    const r = await s().call(TOKEN_PATH, postJson(body));
    expect(r.status).toBe(401);
    expect(r.headers.get("content-type")).toBe("application/problem+json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("www-authenticate")).toBe(API_KEY_CHALLENGE);
    expect(r.json).toEqual(problem(401, "Unauthorized", "unknown_api_key", r.json.detail, TOKEN_PATH, "invalid_client"));
    expectNoSecret(r, [secret]);
  });
});

describe("POST /api/v2/auth/token: a disabled merchant is refused (401 by default)", () => {
  const disabled: MerchantInput = {
    id: "merchant_disabled",
    name: "Disabled Merchant",
    apiKey: "disabled-api-key",
    apiSecret: "disabled-api-secret",
    paymentToken: "disabled-payment-token",
    disabled: true,
  };
  const s = serverPerDescribe({ merchants: [disabled] });
  const message = "The merchant of api_key 'disabled-api-key' is disabled, so it cannot get tokens. Use an active merchant's credentials.";

  it("refuses the right credentials of a disabled merchant with 401 merchant_disabled", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: "disabled-api-key", api_secret: "disabled-api-secret" }));
    expectRefusal(r, invalidClient("merchant_disabled", message));
    expectNoSecret(r, ["disabled-api-secret"]);
  });

  it("refuses a wrong secret for a disabled merchant as wrong_api_secret (it does not reveal that the merchant is disabled)", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: "disabled-api-key", api_secret: WRONG_SECRET }));
    expectRefusal(
      r,
      invalidClient(
        "wrong_api_secret",
        "The api_secret does not match the api_key 'disabled-api-key'. Check that the secret belongs to this key and was not rotated.",
      ),
    );
  });

  it("issues nothing for the disabled merchant", () => {
    expect(internalsOf(s().sandbox).ledger.size).toBe(0);
  });
});

describe("POST /api/v2/auth/token: disabledMerchantStatus 403 refuses a disabled merchant with 403", () => {
  const active: MerchantInput = {
    id: "merchant_active",
    apiKey: "active-api-key",
    apiSecret: "active-api-secret",
    paymentToken: "active-payment-token",
    scopes: ["payment"],
  };
  const disabled: MerchantInput = {
    id: "merchant_disabled",
    apiKey: "disabled-api-key",
    apiSecret: "disabled-api-secret",
    paymentToken: "disabled-payment-token",
    disabled: true,
  };
  const s = serverPerDescribe({ merchants: [active, disabled], disabledMerchantStatus: 403 });

  it("refuses the disabled merchant with 403 merchant_disabled and the ApiKey challenge", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: "disabled-api-key", api_secret: "disabled-api-secret" }));
    expectRefusal(
      r,
      invalidClient(
        "merchant_disabled",
        "The merchant of api_key 'disabled-api-key' is disabled, so it cannot get tokens. Use an active merchant's credentials.",
        403,
      ),
    );
    expectNoSecret(r, ["disabled-api-secret"]);
  });

  it("still issues tokens to an active merchant, with that merchant's sub, client_id and scopes", async () => {
    const r = await s().call(TOKEN_PATH, postJson({ api_key: "active-api-key", api_secret: "active-api-secret" }));
    expectToken(r, {
      kid: s().sandbox.keys.signing.kid,
      sub: "merchant_active",
      clientId: "active-api-key",
      scope: "payment",
    });
  });
});

describe("POST /api/v2/auth/token: a refused exchange changes no state; a successful one records one token", () => {
  const s = serverPerDescribe();

  it.each([
    ["400 missing api_secret", () => postJson({ api_key: DEFAULT_KEY }), 400],
    ["400 credential conflict", () => postJson(validBody, { "x-api-secret": WRONG_SECRET }), 400],
    ["401 unknown api_key", () => postJson({ api_key: "unknown-api-key", api_secret: DEFAULT_SECRET }), 401],
    ["401 wrong api_secret", () => postJson({ api_key: DEFAULT_KEY, api_secret: WRONG_SECRET }), 401],
    ["415 form body", () => post("a=b", { "content-type": "application/x-www-form-urlencoded" }), 415],
    ["413 oversized body", () => post(paddedJson(70_000), { "content-type": "application/json" }), 413],
  ])("leaves the token ledger's size unchanged after a %s", async (_label, init, status) => {
    const before = internalsOf(s().sandbox).ledger.size;
    const r = await s().call(TOKEN_PATH, init());
    expect(r.status).toBe(status);
    expectNoSecret(r);
    expect(internalsOf(s().sandbox).ledger.size).toBe(before);
  });

  it("grows the token ledger's size by exactly 1 after a successful exchange, recording that token's jti", async () => {
    const before = internalsOf(s().sandbox).ledger.size;
    const r = await s().call(TOKEN_PATH, postJson(validBody));
    const token = expectToken(r, { kid: s().sandbox.keys.signing.kid });
    expect(internalsOf(s().sandbox).ledger.size).toBe(before + 1);
    const jti = decodeJwt(token).jti!;
    expect(internalsOf(s().sandbox).ledger.get(jti)).toEqual({
      jti,
      merchantId: DEFAULT_MERCHANT_ID,
      issuedAt: IAT,
      expiresAt: IAT + 3600,
    });
  });
});

describe("POST /api/v2/auth/token: the tokenTtl setting sets expires_in and exp - iat", () => {
  const s = serverPerDescribe({ tokenTtl: "90s" });

  it("answers expires_in 90 and issues a token with exp = iat + 90", async () => {
    const r = await s().call(TOKEN_PATH, postJson(validBody));
    const token = expectToken(r, { kid: s().sandbox.keys.signing.kid, ttl: 90 });
    const claims = decodeJwt(token);
    expect(r.json.expires_in).toBe(90);
    expect(claims.exp! - claims.iat!).toBe(90);
  });
});

describe.each([
  ["ES256"],
  ["HS256"],
])("POST /api/v2/auth/token: algorithm %s signs the access token with that algorithm, and it works on the payment group", (alg) => {
  const s = serverPerDescribe({ algorithm: alg });

  it(`issues an ${alg} at+jwt with the sandbox kid, accepted by GET /api/v2/payment/x (200)`, async () => {
    const kid = s().sandbox.keys.signing.kid;
    const token = expectToken(await s().call(TOKEN_PATH, postJson(validBody)), { alg, kid });
    const jti = decodeJwt(token).jti;
    const r = await s().call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual({
      sandbox: true,
      merchant_id: DEFAULT_MERCHANT_ID,
      operation: "GET /api/v2/payment/x",
      scope: "payment",
      token_id: jti,
      expires_at: new Date((IAT + 3600) * 1000).toISOString(),
      note: "Authenticated. merchant-sandbox simulates authentication only; payment and cashout business behaviour is not simulated.",
    });
  });
});
