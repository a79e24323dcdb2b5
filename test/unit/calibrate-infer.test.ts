import { describe, expect, it } from "vitest";
import { compareProfiles } from "../../src/cli/calibrate/compare.js";
import { CannotInfer, durationText, inferProfile, REDACTED } from "../../src/cli/calibrate/infer.js";
import type { Answer, Observation, Observations, ProbeName } from "../../src/cli/calibrate/observations.js";
import { retryAfterSeconds } from "../../src/cli/calibrate/probe.js";
import { scrub, scrubber, scrubJson } from "../../src/cli/calibrate/scrub.js";
import { encodings } from "../support/providers/echo.js";

/** The pure half of calibrate: from recorded answers to the profile, and profile against profile. */

const NOW = 1_800_000_000; // seconds
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const jwtOf = (header: Record<string, unknown>, payload: Record<string, unknown>) => `${b64(header)}.${b64(payload)}.c2lnbmF0dXJl`;
const JWT = jwtOf(
  { alg: "ES256", typ: "JWT", kid: "k1" },
  { merchant_id: "M-1", iss: "acme", aud: ["acme-api", "other"], iat: NOW, exp: NOW + 3600 },
);

function answer(status: number, json: unknown, headers: Record<string, string> = {}): Answer {
  return { status, contentType: "application/json", headers, json, notJson: false };
}

function observations(list: Array<[ProbeName, Answer]>): Observations {
  const observed: Observation[] = list.map(([probe, a]) => ({ probe, sent: `the ${probe} probe`, answer: a }));
  return { url: "https://acme.test", startedAt: NOW * 1000, observed, skipped: [] };
}

const refusal = (status: number, code: string, message: string) => answer(status, { error: { code, message } });

describe("inferProfile: the token answer", () => {
  it("puts placeholders where the token, its lifetime and its expiry are, and keeps the rest", () => {
    const body = {
      result: {
        accessToken: JWT,
        tokenType: "Bearer",
        validity: 60,
        lifetime: 3600,
        expiresAt: new Date((NOW + 3600) * 1000).toISOString(),
        expiresAtUnix: NOW + 3601,
        issuedAt: new Date(NOW * 1000).toISOString(),
        refreshToken: "rt_9c2f5b1e8a7d4c3b2a1f0e9d",
      },
    };
    const { profile } = inferProfile(observations([["token_body", answer(200, body, { "cache-control": "no-store" })]]), "acme");
    expect(profile.token).toEqual({
      status: 200,
      contentType: "application/json",
      headers: { "Cache-Control": "no-store" },
      body: {
        result: {
          accessToken: "{{access_token}}",
          tokenType: "Bearer",
          validity: "{{expires_in_minutes}}",
          lifetime: "{{expires_in}}",
          expiresAt: "{{expires_at}}",
          expiresAtUnix: "{{expires_at_unix}}",
          issuedAt: "{{issued_at}}",
          refreshToken: REDACTED,
        },
      },
    });
  });

  it("reads the JWT's header and claims into the jwt section, the merchant claim by its name", () => {
    const { profile, findings } = inferProfile(observations([["token_body", answer(200, { token: JWT })]]), "acme");
    expect(profile.jwt).toEqual({ alg: "ES256", typ: "JWT", ttl: "1h", issuer: "acme", audience: "acme-api", merchantClaim: "merchant_id" });
    expect(findings.find((f) => f.probe === "jwt")?.inferred).toBe("merchantClaim merchant_id: the claim whose name says merchant");
  });

  it("refuses to guess without a JWT, or when the exchange was refused", () => {
    expect(() => inferProfile(observations([["token_body", answer(200, { token: "opaque-token-value" })]]), "acme")).toThrow(CannotInfer);
    expect(() => inferProfile(observations([["token_body", refusal(401, "INVALID_CREDENTIALS", "No.")]]), "acme")).toThrow(
      "The token exchange with the given --api-key and --api-secret was refused (HTTP 401); check the credentials and --url, then run calibrate again.",
    );
  });
});

describe("inferProfile: refusals", () => {
  it("Lexik's {code: <status>, message}: the status and the message, and no codes", () => {
    const lexik = (status: number, message: string) => answer(status, { code: status, message }, { "www-authenticate": "Bearer" });
    const { profile } = inferProfile(
      observations([
        ["token_body", answer(200, { token: JWT })],
        ["wrong_secret", lexik(401, "Invalid credentials.")],
        ["missing_secret", lexik(400, 'The key "api_secret" must be provided.')],
        ["expired_token", lexik(401, "Expired JWT Token")],
      ]),
      "lexik",
    );
    expect(profile.refusal).toEqual({
      contentType: "application/json",
      body: { code: "{{status}}", message: "{{message}}" },
      wwwAuthenticate: "keep",
    });
    expect(profile.codes).toBeUndefined();
  });

  it("string codes to codes, a status only where it differs from the sandbox's, a body of its own for another shape", () => {
    const { profile, findings } = inferProfile(
      observations([
        ["token_body", answer(200, { token: JWT })],
        ["wrong_secret", refusal(401, "INVALID_CREDENTIALS", "The client credentials are invalid.")],
        ["unknown_key", refusal(403, "UNKNOWN_CLIENT", "This client is not registered.")],
        ["malformed_json", answer(400, { message: "Bad request body", error: "parse_error" })],
        ["foreign_jwt", refusal(401, "TOKEN_INVALID", "The access token could not be validated.")],
      ]),
      "acme",
    );
    expect(profile.refusal).toEqual({
      contentType: "application/json",
      body: { error: { code: "{{code}}", message: "{{message}}" } },
      wwwAuthenticate: "omit",
    });
    expect(profile.codes).toEqual({
      wrong_api_secret: { code: "INVALID_CREDENTIALS" },
      unknown_api_key: { code: "UNKNOWN_CLIENT", status: 403 },
      body_malformed_json: { code: "parse_error", body: { message: "{{message}}", error: "{{code}}" } },
      token_unknown_kid: { code: "TOKEN_INVALID" },
      token_signature_invalid: { code: "TOKEN_INVALID" },
      token_kid_missing: { code: "TOKEN_INVALID" },
      token_algorithm_rejected: { code: "TOKEN_INVALID" },
      // No --expired-token: answered as the foreign-key JWT, and the table says so.
      token_expired: { code: "TOKEN_INVALID" },
    });
    expect(findings.filter((f) => f.probe === "(inferred)").map((f) => f.inferred)).toContain(
      "token_expired: no --expired-token given: answered as the foreign-key JWT (an invalid token)",
    );
  });

  it("a numeric code that differs between refusals is the code, the status beside it stays the status", () => {
    const numeric = (status: number, errorCode: number, message: string) => answer(status, { status, errorCode, message });
    const { profile } = inferProfile(
      observations([
        ["token_body", answer(200, { token: JWT })],
        ["wrong_secret", numeric(401, 40101, "Wrong secret for this key.")],
        ["malformed_token", numeric(401, 40111, "The token is not a JWT.")],
      ]),
      "acme",
    );
    expect(profile.refusal?.body).toEqual({ status: "{{status}}", errorCode: "{{code}}", message: "{{message}}" });
    expect(profile.codes).toEqual({ wrong_api_secret: { code: 40101 }, token_malformed: { code: 40111 } });
  });

  it("a refusal that is not JSON keeps only its status", () => {
    const text: Answer = { status: 415, contentType: "text/html", headers: {}, json: undefined, notJson: true };
    const { profile, findings } = inferProfile(
      observations([
        ["token_body", answer(200, { token: JWT })],
        ["malformed_json", text],
      ]),
      "acme",
    );
    expect(profile.codes).toEqual({ body_malformed_json: { status: 415 } });
    expect(profile.refusal).toBeUndefined();
    expect(findings.find((f) => f.probe === "malformed_json")?.inferred).toBe("the body is not a JSON object, so only the status is reproduced");
  });
});

describe("inferProfile: payment/init and login", () => {
  it("finds the payment id, the checkout URL, the timestamps and the echoed order fields", () => {
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      ["login", answer(200, { data: { jwt: JWT } })],
      [
        "payment_init",
        answer(201, {
          payment: {
            paymentId: "pay_123",
            link: "https://pay.acme.test/p/pay_123",
            createdAt: new Date(NOW * 1000).toISOString(),
            validUntil: new Date((NOW + 1800) * 1000).toISOString(),
            amount: 100,
            state: "NEW",
          },
        }),
      ],
    ]);
    obs.paymentInitSent = { amount: 100, currency: "EUR" };
    const { profile } = inferProfile(obs, "acme");
    expect(profile.login).toEqual({ status: 200, body: { data: { jwt: "{{access_token}}" } } });
    expect(profile.paymentInit).toEqual({
      status: 201,
      body: {
        payment: {
          paymentId: "{{payment_id}}",
          link: "{{checkout_url}}",
          createdAt: "{{created_at}}",
          validUntil: "{{expires_at}}",
          amount: "{{amount}}",
          state: "NEW",
        },
      },
    });
  });
});

describe("compareProfiles", () => {
  const obs = observations([
    ["token_body", answer(200, { result: { accessToken: JWT, validity: 60 } })],
    ["wrong_secret", refusal(401, "INVALID_CREDENTIALS", "The client credentials are invalid.")],
    ["expired_token", refusal(401, "TOKEN_EXPIRED", "The access token is past its validity.")],
  ]);
  const { profile } = inferProfile(obs, "acme");

  it("finds nothing when the provider answers as the profile says", () => {
    expect(compareProfiles(JSON.parse(JSON.stringify(profile)), profile, obs)).toEqual([]);
  });

  it("names a renamed field, a new status and a changed code", () => {
    const stored = JSON.parse(JSON.stringify(profile));
    stored.token.body.result = { token: "{{access_token}}", validity: "{{expires_in_minutes}}" };
    stored.codes.token_expired = { code: "EXPIRED" };
    stored.codes.wrong_api_secret = { code: "INVALID_CREDENTIALS", status: 403 };
    stored.jwt.ttl = "30m";
    expect(compareProfiles(stored, profile, obs)).toEqual([
      { where: "token.body: result.token", profile: "result.token: {{access_token}}", provider: "renamed to result.accessToken" },
      { where: "codes.wrong_api_secret.status", profile: "403", provider: "401" },
      { where: "codes.token_expired.code", profile: "EXPIRED", provider: "TOKEN_EXPIRED" },
      { where: "jwt.ttl", profile: "1800 s", provider: "3600 s" },
    ]);
  });
});

describe("calibrate's small helpers", () => {
  it("writes lifetimes as --token-ttl does", () => {
    expect([3600, 1800, 90, 0].map(durationText)).toEqual(["1h", "30m", "90s", "0s"]);
  });

  it("reads Retry-After as seconds or an HTTP-date", () => {
    expect(retryAfterSeconds("1")).toBe(1);
    expect(retryAfterSeconds(undefined)).toBeUndefined();
    expect(retryAfterSeconds("soon")).toBeUndefined();
    expect(retryAfterSeconds(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4);
  });

  it("scrubs every secret of six characters or more from a text", () => {
    expect(scrub("key s3cr3t-value and s3cr3t-value, abc", ["s3cr3t-value", "abc"])).toBe("key [redacted] and [redacted], abc");
  });

  it("no secret in clear: scrubs every encoding of a secret (percent in either case, base64 and base64url at any alignment, JSON escapes)", () => {
    for (const secret of ["s3cr3t-value", "pa/ss+w0rd=é€😀", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtIn0.c2ln"]) {
      const s = scrubber([secret]);
      for (const [name, form] of Object.entries(encodings(secret))) {
        const text = `before ${form} after`;
        const out = s.scrub(text);
        expect(out, `${name} of ${secret}`).toMatch(/^before .*\[redacted\].* after$/);
        expect(out, `${name} of ${secret}`).not.toContain(form);
        expect(s.finds(text), `${name} of ${secret}`).toBe(true);
        expect(s.finds(out), `${name} of ${secret} after scrubbing`).toBe(false);
      }
    }
    // Mixed forms in one secret, and a secret in an object key.
    const s = scrubber(["s3cr3t-value"]);
    expect(s.scrub("x s3%63r\\u0033t%2Dvalue y")).toBe("x [redacted] y");
    expect(scrubJson({ "s3cr3t-value": ["s3cr3t-value"] }, s)).toEqual({ "[redacted]": ["[redacted]"] });
    expect(s.scrub("nothing to see, 100% sure \\u00e9")).toBe("nothing to see, 100% sure \\u00e9");
  });
});
