import { describe, expect, it } from "vitest";
import { harEntry } from "../../src/cli/record/har-entry.js";
import { pseudonym, recordedBody, recordedHeader } from "../../src/cli/record/har-secrets.js";

// What `merchant-sandbox record` writes in place of secrets: every value the sandbox's redaction
// names a secret (core/redact.ts isSecretName), in JSON bodies, forms, query strings and headers,
// becomes a stable pseudonym; a JWT keeps its claims and loses its signature; what a client and
// calibrate read (token_type, expiry times, challenges, the api_key) stays.

const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtIn0.c2lnbmF0dXJlLW9mLXRoZS1wcm92aWRlcg";
const UNSIGNED = recordedBody(JWT);

describe("the recording's secrets", () => {
  it("JSON members named as secrets become pseudonyms, whatever the member: payment_token, an opaque access_token, client_secret", () => {
    const body = {
      access_token: "opaque-access-0123456789",
      payment_token: "pt_live_0123456789abcdef",
      client_secret: "cs-0123456789",
      nested: { refresh_token: "rt-0123456789" },
      token_type: "Bearer",
      expires_in: 3600,
      token_expires_at: "2026-11-29T12:00:00Z",
      api_key: "ak-public-id",
    };
    expect(JSON.parse(recordedBody(JSON.stringify(body)))).toEqual({
      access_token: pseudonym("opaque-access-0123456789"),
      payment_token: pseudonym("pt_live_0123456789abcdef"),
      client_secret: pseudonym("cs-0123456789"),
      nested: { refresh_token: pseudonym("rt-0123456789") },
      token_type: "Bearer",
      expires_in: 3600,
      token_expires_at: "2026-11-29T12:00:00Z",
      api_key: "ak-public-id",
    });
  });

  it("a JWT keeps its header and claims and loses its signature, under any name", () => {
    expect(UNSIGNED).not.toBe(JWT);
    expect(UNSIGNED.split(".").slice(0, 2)).toEqual(JWT.split(".").slice(0, 2));
    expect(JSON.parse(recordedBody(JSON.stringify({ access_token: JWT, note: `see ${JWT}` })))).toEqual({
      access_token: UNSIGNED,
      note: `see ${UNSIGNED}`,
    });
  });

  it("a form body is read parameter by parameter", () => {
    expect(recordedBody("grant_type=client_credentials&client_id=shop&client_secret=cs-0123456789", "application/x-www-form-urlencoded")).toBe(
      `grant_type=client_credentials&client_id=shop&client_secret=${pseudonym("cs-0123456789")}`,
    );
  });

  it("headers: credentials and cookies become pseudonyms; a challenge and the api key stay", () => {
    expect(recordedHeader("X-Payment-Token", "pt_live_0123456789abcdef")).toBe(pseudonym("pt_live_0123456789abcdef"));
    expect(recordedHeader("X-Api-Secret", "s3cret")).toBe(pseudonym("s3cret"));
    expect(recordedHeader("Authorization", "Bearer opaque-0123456789")).toBe(`Bearer ${pseudonym("opaque-0123456789")}`);
    expect(recordedHeader("Cookie", "session=abc")).toBe(pseudonym("session=abc"));
    expect(recordedHeader("WWW-Authenticate", 'Bearer error="invalid_token"')).toBe('Bearer error="invalid_token"');
    expect(recordedHeader("X-Api-Key", "ak-public-id")).toBe("ak-public-id");
  });

  it("the URL's query and the entry's queryString hold no secret in clear", () => {
    const entry = harEntry(
      {
        startedAt: 0,
        method: "GET",
        url: "http://provider.test/api/v2/payment/p_1?access_token=opaque-0123456789&page=2",
        requestHeaders: {},
        requestBody: Buffer.alloc(0),
        status: 200,
        answerHeaders: {},
        answerBody: Buffer.alloc(0),
      },
      false,
      5,
    ) as { request: { url: string; queryString: unknown } };
    expect(entry.request.url).toBe(`http://provider.test/api/v2/payment/p_1?access_token=${pseudonym("opaque-0123456789")}&page=2`);
    expect(entry.request.queryString).toEqual([
      { name: "access_token", value: pseudonym("opaque-0123456789") },
      { name: "page", value: "2" },
    ]);
  });
});
