import { describe, expect, it } from "vitest";
import { bodyDifferences, compareProfiles } from "../../src/cli/calibrate/compare.js";
import { CannotInfer, durationText, inferProfile, REDACTED } from "../../src/cli/calibrate/infer.js";
import type { Answer, Observation, Observations, ProbeName } from "../../src/cli/calibrate/observations.js";
import { retryAfterSeconds } from "../../src/cli/calibrate/probe.js";
import { scrub, scrubber, scrubJson } from "../../src/cli/calibrate/scrub.js";
import { validateProfile } from "../../src/profiles/load.js";
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
  it("puts placeholders where the token, its lifetime (within 2 s) and its times are, each time in its format, and keeps the rest", () => {
    const body = {
      result: {
        accessToken: JWT,
        tokenType: "Bearer",
        validity: 60,
        lifetime: 3599,
        expiresAt: new Date((NOW + 3600) * 1000).toISOString(),
        expiresAtUnix: NOW + 3601,
        issuedAt: new Date(NOW * 1000).toISOString().replace(".000Z", "+00:00"),
        refreshToken: "rt_9c2f5b1e8a7d4c3b2a1f0e9d",
      },
    };
    const { profile } = inferProfile(observations([["token_body", answer(200, body, { "cache-control": "no-store" })]]), "acme");
    expect(profile.token).toEqual({
      status: 200,
      contentType: "application/json",
      body: {
        result: {
          accessToken: "{{access_token}}",
          tokenType: "Bearer",
          validity: "{{expires_in_minutes}}",
          lifetime: "{{expires_in}}",
          expiresAt: "{{expires_at:rfc3339-ms}}",
          expiresAtUnix: "{{expires_at_unix}}",
          issuedAt: "{{issued_at:rfc3339-offset}}",
          refreshToken: "rt_{{refresh_token:hex-24}}",
        },
      },
    });
    // The one answer's headers are on every answer: profile-wide.
    expect(profile.headers).toEqual({ "Cache-Control": "no-store" });
  });

  it("tells the access token from a refresh token and an id_token: each other token its own placeholder of its shape", () => {
    const refresh = jwtOf({ alg: "HS512", typ: "JWT" }, { typ: "Refresh", iat: NOW, exp: NOW + 1800 });
    const id = jwtOf({ alg: "RS256", typ: "JWT" }, { typ: "ID", iat: NOW, exp: NOW + 300 });
    // Keycloak's order: the access token first by name, whatever its place.
    const keycloak = {
      refresh_token: refresh,
      access_token: JWT,
      id_token: id,
      expires_in: 3600,
      session_state: "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
    };
    const { profile, lines } = inferProfile(observations([["token_body", answer(200, keycloak)]]), "keycloak");
    expect(profile.token.body).toEqual({
      refresh_token: "{{refresh_token:jwt}}",
      access_token: "{{access_token}}",
      id_token: "{{id_token:jwt}}",
      expires_in: "{{expires_in}}",
      // A session's id is no token a client sends on, but a live value at the provider: not copied.
      session_state: REDACTED,
    });
    expect(lines.find((l) => l.probe === "token_body")?.inferred).toBe(
      'refresh_token: another token, written as {{refresh_token:jwt}} (a fresh one per answer, never accepted); id_token: another token, written as {{id_token:jwt}} (a fresh one per answer, never accepted); session_state: a token-like value, written as "redacted-by-calibrate"',
    );
    // Names that do not tell: the one the protected route accepted, as probing found it.
    const obs = observations([["token_body", answer(200, { a: refresh, b: JWT })]]);
    obs.accessTokenPath = "b";
    expect(inferProfile(obs, "acme").profile.token.body).toEqual({ a: "{{refresh_token:jwt}}", b: "{{access_token}}" });
    expect(inferProfile(observations([["token_body", answer(200, { refresh: refresh, access: JWT })]]), "acme").profile.token.body).toEqual({
      refresh: "{{refresh_token:jwt}}",
      access: "{{access_token}}",
    });
  });

  it("reads the JWT's header and claim names into the jwt section: typ, kid, iss/aud presence, the merchant claim", () => {
    const { profile, lines } = inferProfile(observations([["token_body", answer(200, { token: JWT })]]), "acme");
    expect(profile.jwt).toEqual({
      alg: "ES256",
      typ: "JWT",
      kid: true,
      // {"alg","typ","kid"}: not the sandbox's alg, kid, typ.
      headerOrder: ["alg", "typ", "kid"],
      ttl: "1h",
      issuer: "acme",
      audience: "acme-api",
      merchantClaim: "merchant_id",
      // The provider's token carries no scopes: neither will the sandbox's (its merchant's scopes apply).
      scopeClaim: "none",
    });
    expect(lines.find((f) => f.probe === "jwt")?.inferred).toBe(
      "client_id kept though the provider's token has no client claim: under typ JWT it tells the access token from the login's; merchantClaim merchant_id: the claim whose name says merchant; one token only: no extra claim is known to be constant",
    );
  });

  it("Lexik's token: no typ... typ JWT, no kid, no iss or aud, username = the login e-mail, roles constant across two tokens", () => {
    const lexik = (jti: string) =>
      jwtOf({ typ: "JWT", alg: "RS256" }, { iat: NOW, exp: NOW + 3600, roles: ["ROLE_USER"], username: "shop@acme.test", jti });
    const obs = observations([["token_body", answer(200, { token: lexik("a") })]]);
    obs.repeats = [{ probe: "token_body", sent: "again", answer: answer(200, { token: lexik("b") }) }];
    obs.loginEmail = "shop@acme.test";
    expect(inferProfile(obs, "lexik").profile.jwt).toEqual({
      alg: "RS256",
      typ: "JWT",
      kid: false,
      ttl: "1h",
      issuer: "none",
      audience: "none",
      merchantClaim: "username",
      merchantValue: "login",
      scopeClaim: "none",
      claims: { roles: ["ROLE_USER"] },
    });
    const bare = jwtOf({ alg: "RS256" }, { sub: "m-1", iat: NOW, exp: NOW + 3600, scope: "payment" });
    // Spring's token: no typ, no client claim (none, since typ tells the login's apart), its scope.
    expect(inferProfile(observations([["token_body", answer(200, { token: bare })]]), "spring").profile.jwt).toMatchObject({
      typ: "none",
      clientClaim: "none",
    });
    expect(inferProfile(observations([["token_body", answer(200, { token: bare })]]), "spring").profile.jwt?.scopeClaim).toBeUndefined();
    // Keycloak's: the client under azp.
    const keycloak = jwtOf({ alg: "RS256", typ: "JWT", kid: "k" }, { sub: "m-1", iat: NOW, exp: NOW + 300, azp: "acme", scope: "openid" });
    expect(inferProfile(observations([["token_body", answer(200, { token: keycloak })]]), "kc").profile.jwt?.clientClaim).toBe("azp");
  });

  it("a provider's client claim under another name (Okta's cid) is the clientClaim, never a constant claim: the profile written loads", () => {
    const okta = (jti: string) =>
      jwtOf({ alg: "RS256", kid: "k" }, { sub: "m-1", iat: NOW, exp: NOW + 3600, cid: "0oa-acme", scp: ["payment"], ver: 1, jti });
    const obs = observations([["token_body", answer(200, { access_token: okta("a") })]]);
    obs.repeats = [{ probe: "token_body", sent: "again", answer: answer(200, { access_token: okta("b") }) }];
    const { jwt } = inferProfile(obs, "okta").profile;
    expect(jwt).toMatchObject({ clientClaim: "cid", claims: { ver: 1 } });
    expect(Object.keys(jwt?.claims ?? {})).toEqual(["ver"]);
    expect(() => validateProfile({ name: "okta", jwt }, "okta.yaml")).not.toThrow();
  });

  it("refuses to guess without a JWT, or when the exchange was refused", () => {
    expect(() => inferProfile(observations([["token_body", answer(200, { token: "opaque-token-value" })]]), "acme")).toThrow(CannotInfer);
    expect(() => inferProfile(observations([["token_body", refusal(401, "INVALID_CREDENTIALS", "No.")]]), "acme")).toThrow(
      "The token exchange with the given --api-key and --api-secret was refused (HTTP 401); check the credentials and --url, then run calibrate again.",
    );
  });
});

describe("inferProfile: per-request values", () => {
  it("a member or header that differs between two identical probes is {{request_id}} (its shape) or {{now:<format>}}; a lifetime is not", () => {
    const laravel = (id: string, at: string, ttl: number) =>
      answer(200, { access_token: JWT, expires_in: ttl, request_id: id, at }, { "x-request-id": id, "cache-control": "no-cache, private" });
    const obs = observations([
      ["token_body", laravel("0b7f6a5e-2c1d-4e3f-8a9b-0c1d2e3f4a5b", new Date(NOW * 1000).toISOString(), 3600)],
      [
        "wrong_secret",
        answer(
          401,
          { message: "Unauthenticated." },
          { "x-request-id": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", "cache-control": "no-cache, private" },
        ),
      ],
    ]);
    obs.repeats = [
      { probe: "token_body", sent: "again", answer: laravel("1c8a7b6f-3d2e-4f40-9bac-1d2e3f4a5b6c", new Date((NOW + 1) * 1000).toISOString(), 3599) },
    ];
    const { profile, lines } = inferProfile(obs, "laravel");
    expect(profile.requestId).toBe("uuid");
    expect(profile.headers).toEqual({ "X-Request-Id": "{{request_id}}", "Cache-Control": "no-cache, private" });
    expect(profile.token.body).toEqual({
      access_token: "{{access_token}}",
      expires_in: "{{expires_in}}",
      request_id: "{{request_id}}",
      at: "{{issued_at:rfc3339-ms}}",
    });
    expect(lines.find((f) => f.probe === "per-request")?.cameBack).toBe("differed: X-Request-Id, expires_in, request_id, at");
  });
  it("a gateway's counting headers are counters, read against the limit it states, and --check compares them by kind", () => {
    // The gateway counts every request down from 60 and says when the window resets (a Unix time).
    let left = 60;
    const counted = (status: number, json: unknown) =>
      answer(status, json, {
        "x-ratelimit-limit": "60",
        "x-ratelimit-remaining": String(--left),
        "x-ratelimit-reset": String(NOW + 60 - (60 - left)),
        "x-calls-total": String(1000 + (60 - left)),
      });
    const run = () => {
      const obs = observations([
        ["token_body", counted(200, { token: JWT })],
        ["wrong_secret", counted(401, { message: "Invalid credentials." })],
      ]);
      obs.repeats = [{ probe: "token_body", sent: "again", answer: counted(200, { token: JWT }) }];
      return obs;
    };
    const first = run();
    const { profile, lines } = inferProfile(first, "gateway");
    expect(profile.headers).toEqual({
      "X-Ratelimit-Limit": "60",
      "X-Ratelimit-Remaining": "{{count_down:60}}",
      "X-Ratelimit-Reset": "{{now:unix}}",
      "X-Calls-Total": "{{count_up}}",
    });
    expect(lines.find((f) => f.probe === "per-request")?.cameBack).toBe("differed: X-Ratelimit-Remaining, X-Ratelimit-Reset, X-Calls-Total");
    // A later night: the counters stand elsewhere, nothing differs.
    left = 17;
    const later = run();
    expect(compareProfiles(profile, inferProfile(later, "gateway").profile, later)).toEqual([]);
  });

  it("a counter that wraps between two calls (0, then 59) is still read by the pairs that stepped, also far apart", async () => {
    const { varyingBetween } = await import("../../src/cli/calibrate/per-request.js");
    const left = (n: number) => answer(200, { ok: true }, { "x-ratelimit-remaining": String(n) });
    const first: Observation[] = [
      { probe: "token_body", sent: "", answer: left(0) },
      { probe: "wrong_secret", sent: "", answer: left(40) },
    ];
    const again: Observation[] = [
      { probe: "token_body", sent: "", answer: left(59) },
      { probe: "wrong_secret", sent: "", answer: left(39) },
    ];
    expect(varyingBetween(first, again, () => false).counters).toEqual(new Map([["x-ratelimit-remaining", "down"]]));
    // A recording's repeats lie further apart: steps of 3 and 4 down outvote one wrap.
    const apart = (a: number, b: number, probe: "login" | "payment_init" | "no_authorization") => [
      { probe, sent: "", answer: left(a) },
      { probe, sent: "", answer: left(b) },
    ];
    const pairs = [apart(50, 46, "login"), apart(30, 27, "payment_init"), apart(1, 58, "no_authorization")];
    expect(
      varyingBetween(
        pairs.map((p) => p[0]!),
        pairs.map((p) => p[1]!),
        () => false,
      ).counters,
    ).toEqual(new Map([["x-ratelimit-remaining", "down"]]));
  });

  it("a counter with no limit beside it counts down from the first round limit above what was seen", async () => {
    const { counterPlaceholder } = await import("../../src/cli/calibrate/per-request.js");
    expect(counterPlaceholder("x-remaining", "down", { "x-remaining": "59" })).toBe("{{count_down:60}}");
    expect(counterPlaceholder("x-remaining", "down", { "x-remaining": "60" })).toBe("{{count_down:100}}");
    expect(counterPlaceholder("ratelimit-remaining", "down", { "ratelimit-remaining": "4", "ratelimit-limit": "5" })).toBe("{{count_down:5}}");
    expect(counterPlaceholder("x-quota", "up", { "x-quota": "4" })).toBe("{{count_up}}");
  });

  it("payment/init seen twice: an id made per creation in no request-id shape is {{fresh}}, its prefix kept; the payment's id stays {{payment_id}}", () => {
    const created = (ref: string, id: string, req: string) =>
      answer(201, { result: { ref, payment_id: id, status: "created" } }, { "request-id": req, "x-request-id": `${req}-x` });
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      ["payment_init", created("acme_3f9c0a1b2c4d", "pay_1", "req_Ab3dEf9hIj2kLm")],
    ]);
    obs.repeats = [{ probe: "payment_init", sent: "again", answer: created("acme_0a1b2c3d4e5f", "pay_2", "req_Zy8xWv7uTs6rQp") }];
    const { profile } = inferProfile(obs, "acme");
    expect(profile.paymentInit?.body).toEqual({ result: { ref: "acme_{{fresh:hex-12}}", payment_id: "{{payment_id}}", status: "created" } });
    // Stripe's request id: req_ and 14 letters and digits; a varied value with a dash inside is base64url.
    expect(profile.paymentInit?.headers).toEqual({ "Request-Id": "req_{{fresh:alnum-14}}", "X-Request-Id": "req_{{fresh:base64url-16}}" });
  });

  it("a request id in payment/init's answer is {{request_id}}, not the payment id (its name ends in id)", () => {
    const protectedAnswer = (id: string) => answer(200, { success: true, request_id: id });
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      ["protected_fresh", protectedAnswer("0b7f6a5e-2c1d-4e3f-8a9b-0c1d2e3f4a5b")],
      ["payment_init", answer(201, { data: { payment_id: "pay_1" }, request_id: "2d9b8c7a-4e3f-4a51-8cbd-2e3f4a5b6c7d" })],
    ]);
    obs.repeats = [{ probe: "protected_fresh", sent: "again", answer: protectedAnswer("1c8a7b6f-3d2e-4f40-9bac-1d2e3f4a5b6c") }];
    expect(inferProfile(obs, "laravel").profile.paymentInit?.body).toEqual({ data: { payment_id: "{{payment_id}}" }, request_id: "{{request_id}}" });
  });
});

describe("the token header's member order", () => {
  it("is written only when the provider's differs from the sandbox's: golang-jwt's alg, typ; not lcobucci's typ, alg nor alg, kid, typ", async () => {
    const { headerOrderOf } = await import("../../src/cli/calibrate/provider-jwt.js");
    expect(headerOrderOf({ alg: "HS256", typ: "JWT" })).toEqual(["alg", "typ"]);
    expect(headerOrderOf({ typ: "JWT", alg: "RS256" })).toBeUndefined();
    expect(headerOrderOf({ alg: "RS256", kid: "k1", typ: "at+jwt" })).toBeUndefined();
    expect(headerOrderOf({ kid: "k1", alg: "RS256" })).toEqual(["kid", "alg"]);
    expect(headerOrderOf({ alg: "RS256" })).toBeUndefined();
  });
});

describe("compareProfiles: times finer than milliseconds are one kind", () => {
  const obs = observations([["token_body", answer(200, { token: JWT })]]);
  const profile = (at: string) => ({ name: "go", token: { status: 200, contentType: "application/json", body: { token: "{{access_token}}", at } } });

  it("Go's trimmed nanoseconds and a fixed nine digits are the same; milliseconds are not", () => {
    expect(compareProfiles(profile("{{now:rfc3339-ns}}"), profile("{{now:rfc3339-nano}}"), obs)).toEqual([]);
    expect(compareProfiles(profile("{{now:rfc3339-us}}"), profile("{{now:rfc3339-100ns}}"), obs)).toEqual([]);
    expect(compareProfiles(profile("{{now:rfc3339-ms}}"), profile("{{now:rfc3339-nano}}"), obs)).toEqual([
      { where: "token.body: at", profile: "{{now:rfc3339-ms}}", provider: "{{now:rfc3339-fine}}" },
    ]);
  });
});

describe("inferProfile: refusals", () => {
  const lexik = (status: number, message: string) => answer(status, { code: status, message }, { "www-authenticate": "Bearer" });

  it("a body that is not JSON is written as a text template with its content type: Go's http.Error line, a gateway's HTML page", () => {
    const text = (status: number, contentType: string, body: string, challenge?: string): Answer => ({
      status,
      contentType: contentType.split(";")[0],
      headers: { "content-type": contentType, ...(challenge && { "www-authenticate": challenge }) },
      json: undefined,
      notJson: true,
      text: body,
    });
    const nginx = (status: number, reason: string) =>
      text(
        status,
        "text/html",
        `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
      );
    const obs = observations([
      ["token_body", answer(200, { access_token: JWT })],
      ["wrong_secret", text(401, "text/plain; charset=utf-8", "invalid credentials\n")],
      ["malformed_token", text(401, "text/plain; charset=utf-8", "token is malformed: token contains an invalid number of segments\n")],
      ["no_authorization", nginx(401, "Authorization Required")],
    ]);
    const { profile } = inferProfile(obs, "go");
    expect(profile.codes?.wrong_api_secret).toMatchObject({ message: "invalid credentials" });
    expect(profile.codes?.token_malformed).toMatchObject({ message: "token is malformed: token contains an invalid number of segments" });
    // The text/plain shape most refusals share says {{message}} once, at the top; nginx's page is the
    // protected group's no-token answer, its title the message.
    expect(profile.refusal).toMatchObject({ contentType: "text/plain; charset=utf-8", text: "{{message}}\n" });
    expect(profile.codes?.credentials_missing).toEqual({
      message: "401 Authorization Required",
      contentType: "text/html",
      text: "<html>\r\n<head><title>{{message}}</title></head>\r\n<body>\r\n<center><h1>{{message}}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
    });
    // A text body is compared like any body: the service's new wording is one line.
    const reworded = observations([
      ["token_body", answer(200, { access_token: JWT })],
      ["wrong_secret", text(401, "text/plain; charset=utf-8", "invalid credentials\n")],
      ["malformed_token", text(401, "text/plain; charset=utf-8", "token is malformed: token contains an invalid number of segments\n")],
      ["no_authorization", nginx(401, "Unauthorized")],
    ]);
    expect(compareProfiles(profile, inferProfile(reworded, "go").profile, reworded)).toEqual([
      { where: "codes.credentials_missing.message", profile: "401 Authorization Required", provider: "401 Unauthorized" },
    ]);
  });

  it("observes an empty Bearer and the payment token on a protected route instead of inferring them", () => {
    // A Flask-JWT-Extended-like provider: PyJWT's "Not enough segments" as a 422, a bare challenge for no token.
    const flask = (status: number, msg: string, challenge?: string) => answer(status, { msg }, challenge ? { "www-authenticate": challenge } : {});
    const { profile, lines } = inferProfile(
      observations([
        ["token_body", answer(200, { access_token: JWT })],
        ["no_authorization", flask(401, "Missing Authorization Header", "Bearer")],
        ["empty_bearer", flask(401, "Missing Authorization Header", "Bearer")],
        ["payment_token_protected", flask(422, "Not enough segments")],
        ["malformed_token", flask(422, "Not enough segments")],
        ["foreign_jwt", flask(422, "Signature verification failed", 'Bearer error="invalid_token"')],
        ["wrong_payment_token", flask(401, "Invalid payment token")],
      ]),
      "flask",
    );
    // The bare challenge is the protected group's most common one: the code's entry need not repeat it.
    expect(profile.refusal?.groups?.protected?.wwwAuthenticate ?? profile.refusal?.wwwAuthenticate).toBe("Bearer");
    expect(profile.codes?.bearer_token_empty).toEqual({ status: 401, message: "Missing Authorization Header" });
    expect(profile.codes?.payment_token_not_accepted).toEqual({ status: 422, message: "Not enough segments", wwwAuthenticate: "omit" });
    for (const probe of ["empty_bearer", "payment_token_protected"] as const) expect(lines.find((l) => l.probe === probe)?.inferred).toBeUndefined();
    expect(lines.filter((l) => l.probe === "(inferred)").map((l) => l.inferred?.split(":")[0])).not.toContain("bearer_token_empty");
  });

  it("Lexik: {code: <status>, message} with the bare challenge; each code keeps its own text, unobserved ones the nearest's", () => {
    const { profile, lines } = inferProfile(
      observations([
        ["token_body", answer(200, { token: JWT })],
        ["wrong_secret", lexik(401, "Invalid credentials.")],
        ["no_authorization", lexik(401, "JWT Token not found")],
        ["foreign_jwt", lexik(401, "Invalid JWT Token")],
        ["expired_token", lexik(401, "Expired JWT Token")],
      ]),
      "lexik",
    );
    expect(profile.refusal).toEqual({
      contentType: "application/json",
      body: { code: "{{status}}", message: "{{message}}" },
      wwwAuthenticate: "Bearer",
    });
    expect(profile.codes?.wrong_api_secret).toEqual({ message: "Invalid credentials." });
    expect(profile.codes?.credentials_missing).toEqual({ message: "JWT Token not found" });
    expect(profile.codes?.token_expired).toEqual({ message: "Expired JWT Token" });
    // Every token error from the observed token error, every rejected credential from the observed one.
    expect(profile.codes?.token_signature_invalid).toEqual({ message: "Invalid JWT Token" });
    expect(profile.codes?.credentials_rejected).toEqual({ message: "Invalid credentials." });
    expect(lines.find((f) => f.profileSays.startsWith("codes.token_signature_invalid"))?.inferred).toBe(
      "token_signature_invalid: not probed: answered as the observed token error (foreign_jwt)",
    );
  });

  it("Spring: empty-bodied refusals, the challenge a template with {{message}}, the expiry time a placeholder in its format", () => {
    const uri = "https://tools.ietf.org/html/rfc6750#section-3.1";
    const challenge = (d: string) => ({ "www-authenticate": `Bearer error="invalid_token", error_description="${d}", error_uri="${uri}"` });
    const empty = (headers: Record<string, string>): Answer => ({
      status: 401,
      contentType: undefined,
      headers,
      json: undefined,
      notJson: false,
      empty: true,
    });
    const exp = NOW - 3700;
    const obs = observations([
      ["token_body", answer(200, { access_token: JWT, expires_in: 3600 })],
      ["no_authorization", empty({ "www-authenticate": "Bearer" })],
      ["malformed_token", empty(challenge("An error occurred while attempting to decode the Jwt: Malformed token"))],
      [
        "expired_token",
        empty(
          challenge(`An error occurred while attempting to decode the Jwt: Jwt expired at ${new Date(exp * 1000).toISOString().replace(".000", "")}`),
        ),
      ],
    ]);
    obs.expiredTokenExp = exp;
    const { profile } = inferProfile(obs, "spring");
    expect(profile.refusal).toEqual({
      empty: true,
      wwwAuthenticate: `Bearer error="invalid_token", error_description="{{message}}", error_uri="${uri}"`,
    });
    expect(profile.codes?.credentials_missing).toEqual({ wwwAuthenticate: "Bearer" });
    expect(profile.codes?.token_expired).toEqual({
      message: "An error occurred while attempting to decode the Jwt: Jwt expired at {{token_expires_at:rfc3339}}",
    });
    expect(profile.codes?.token_malformed).toEqual({ message: "An error occurred while attempting to decode the Jwt: Malformed token" });
  });

  it("values that track the code, the message or the path become placeholders: the sandbox's own problem+json learnt whole", () => {
    const problem = (status: number, code: string, error: string, detail: string, path: string) =>
      answer(status, {
        type: `urn:merchant-sandbox:problem:${code}`,
        title: status === 401 ? "Unauthorized" : "Bad Request",
        status,
        detail,
        code,
        error,
        error_description: detail,
        instance: path,
      });
    const obs = observations([
      ["token_body", answer(200, { access_token: JWT })],
      ["wrong_secret", problem(401, "wrong_api_secret", "invalid_client", "The api_secret does not match.", "/api/v2/auth/token")],
      ["malformed_token", problem(401, "token_malformed", "invalid_token", "The bearer token is not a JWT.", "/api/v2/payment/status")],
    ]);
    obs.observed[1]!.path = "/api/v2/auth/token";
    obs.observed[2]!.path = "/api/v2/payment/status";
    const { profile } = inferProfile(obs, "oauth");
    expect(profile.refusal?.body).toEqual({
      type: "urn:merchant-sandbox:problem:{{sandbox_code}}",
      title: "{{status_text}}",
      status: "{{status}}",
      detail: "{{message}}",
      code: "{{code}}",
      error: "{{error}}",
      error_description: "{{message}}",
      instance: "{{instance}}",
    });
    // The provider answered with the sandbox's own codes: its texts are the sandbox's explanations,
    // left to {{message}}; only the codes inferred from the token error carry its status.
    expect(profile.codes).toEqual({ bearer_token_empty: { status: 401 }, bearer_token_malformed: { status: 401 } });
  });

  it("string codes to codes, a status only where it differs from the sandbox's, a body of its own for another shape", () => {
    const { profile } = inferProfile(
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
    expect(profile.codes?.wrong_api_secret).toEqual({ code: "INVALID_CREDENTIALS", message: "The client credentials are invalid." });
    expect(profile.codes?.unknown_api_key).toEqual({ code: "UNKNOWN_CLIENT", status: 403, message: "This client is not registered." });
    expect(profile.codes?.body_malformed_json).toEqual({ message: "Bad request body", body: { message: "{{message}}", error: "parse_error" } });
    // No --expired-token: answered as the foreign-key JWT.
    expect(profile.codes?.token_expired).toEqual({ code: "TOKEN_INVALID", message: "The access token could not be validated." });
  });

  it("a refusal that is not JSON keeps its status, and says so", () => {
    const text: Answer = { status: 415, contentType: "text/html", headers: {}, json: undefined, notJson: true };
    const { profile, lines } = inferProfile(
      observations([
        ["token_body", answer(200, { token: JWT })],
        ["malformed_json", text],
      ]),
      "acme",
    );
    expect(profile.codes).toEqual({ body_malformed_json: { status: 415 } });
    expect(lines.find((f) => f.probe === "malformed_json")?.inferred).toBe(
      "the body is neither JSON nor text calibrate can template: only its status, challenge and headers are reproduced",
    );
  });

  it("a text that differs between two identical calls is not kept", () => {
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      ["wrong_secret", lexik(401, "Invalid credentials (attempt 1).")],
    ]);
    obs.repeats = [{ probe: "wrong_secret", sent: "again", answer: lexik(401, "Invalid credentials (attempt 2).") }];
    const { profile } = inferProfile(obs, "acme");
    expect(profile.codes?.wrong_api_secret).toBeUndefined();
  });
});

describe("inferProfile: the protected call, payment/init and login", () => {
  it("records the protected call's 200 with {{merchant_id}} and its headers", () => {
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      ["protected_fresh", answer(200, { success: true, data: { merchant: "M-1", operation: "payment.status" } }, { "x-ratelimit-remaining": "99" })],
    ]);
    const { profile } = inferProfile(obs, "acme");
    expect(profile.protected).toEqual({
      status: 200,
      contentType: "application/json",
      headers: { "X-Ratelimit-Remaining": "99" },
      body: { success: true, data: { merchant: "{{merchant_id}}", operation: "payment.status" } },
    });
  });

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
    expect(profile.login).toEqual({ status: 200, contentType: "application/json", body: { data: { jwt: "{{access_token}}" } } });
    expect(profile.paymentInit).toEqual({
      status: 201,
      contentType: "application/json",
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

// biome-ignore lint/suspicious/noExplicitAny: a profile changed member by member, as a provider's drift would
type Loose = any;

describe("compareProfiles: one line per thing a client could branch on", () => {
  const lexik = (status: number, message: string) =>
    answer(status, { code: status, message }, { "www-authenticate": "Bearer", "x-request-id": "2d9b8c7a-4e3f-4a51-8cbd-2e3f4a5b6c7d" });
  const obs = observations([
    ["token_body", answer(200, { token: JWT, expires_in: 3600 }, { "x-request-id": "0b7f6a5e-2c1d-4e3f-8a9b-0c1d2e3f4a5b" })],
    ["wrong_secret", lexik(401, "Invalid credentials.")],
    ["expired_token", lexik(401, "Expired JWT Token")],
  ]);
  obs.repeats = [
    {
      probe: "token_body",
      sent: "again",
      answer: answer(200, { token: JWT, expires_in: 3600 }, { "x-request-id": "1c8a7b6f-3d2e-4f40-9bac-1d2e3f4a5b6c" }),
    },
  ];
  const { profile } = inferProfile(obs, "acme");
  const drift = (change: (p: Loose) => void) => {
    const now = structuredClone(profile) as Loose;
    change(now);
    return compareProfiles(profile, now, obs);
  };

  it("finds nothing when the provider answers as the profile says, request ids compared by shape", () => {
    expect(profile.headers).toEqual({ "X-Request-Id": "{{request_id}}" });
    expect(compareProfiles(structuredClone(profile), profile, obs)).toEqual([]);
  });

  it.each([
    [
      "a renamed field",
      (p: Loose) => (p.token.body = { jwt: "{{access_token}}", expires_in: "{{expires_in}}" }),
      { where: "token.body: token", profile: "token: {{access_token}}", provider: "renamed to jwt" },
    ],
    [
      "a removed field",
      (p: Loose) => delete p.token.body.expires_in,
      { where: "token.body: expires_in", profile: "expires_in: {{expires_in}}", provider: "(gone)" },
    ],
    [
      "an added field",
      (p: Loose) => (p.token.body.refresh_in = 60),
      { where: "token.body: refresh_in", profile: "(absent)", provider: "refresh_in: 60" },
    ],
    ["a status", (p: Loose) => (p.codes.wrong_api_secret.status = 403), { where: "codes.wrong_api_secret.status", profile: "401", provider: "403" }],
    [
      "a code",
      (p: Loose) => (p.codes.token_expired.code = "EXPIRED"),
      { where: "codes.token_expired.code", profile: "(the sandbox's code)", provider: "EXPIRED" },
    ],
    [
      "a message text",
      (p: Loose) => (p.codes.token_expired.message = "JWT expired"),
      { where: "codes.token_expired.message", profile: "Expired JWT Token", provider: "JWT expired" },
    ],
    ["a challenge", (p: Loose) => (p.refusal.wwwAuthenticate = 'Bearer realm="api"'), null],
    [
      "a content type",
      (p: Loose) => (p.codes.token_expired.contentType = "application/problem+json"),
      { where: "codes.token_expired.contentType", profile: "application/json", provider: "application/problem+json" },
    ],
    [
      "a body that became empty",
      (p: Loose) => (p.codes.token_expired.empty = true),
      { where: "codes.token_expired.body", profile: "a body", provider: "no body (empty)" },
    ],
    [
      "a header that appeared",
      (p: Loose) => (p.token.headers = { "X-RateLimit-Limit": "60" }),
      { where: "token.headers: x-ratelimit-limit", profile: "(absent)", provider: "appeared: 60" },
    ],
    [
      "a header that disappeared",
      (p: Loose) => {
        // Gone from the token answer only: the others still carry it.
        delete p.headers;
        p.refusal.headers = { "X-Request-Id": "{{request_id}}" };
      },
      { where: "token.headers: x-request-id", profile: "{{request_id}}", provider: "(gone)" },
    ],
  ])("%s", (_, change, line) => {
    const found = drift(change);
    if (line) expect(found).toEqual([line]);
    // The same change in two codes' answers: one line naming both.
    else
      expect(found).toEqual([{ where: "codes.{wrong_api_secret,token_expired}.wwwAuthenticate", profile: "Bearer", provider: 'Bearer realm="api"' }]);
  });

  it("a code that moved into a body member is one line, with its value", () => {
    expect(
      drift((p) => {
        p.codes.token_expired.code = 4011;
        p.codes.token_expired.body = { code: "{{code}}", message: "{{message}}" };
      }),
    ).toEqual([{ where: "codes.token_expired.body: code", profile: "{{status}}", provider: "{{code}} = 4011" }]);
  });

  it("an object renamed whole is one line", () => {
    expect(bodyDifferences("protected.body", { data: { a: 1, b: 2 } }, { result: { a: 1, b: 2 } })).toEqual([
      { where: "protected.body: data", profile: "data: 2 members", provider: "renamed to result" },
    ]);
  });

  it("a body that stopped being empty", () => {
    const before = structuredClone(profile) as Loose;
    before.codes.token_expired.empty = true;
    expect(compareProfiles(before, profile, obs)).toEqual([{ where: "codes.token_expired.body", profile: "no body", provider: "a body" }]);
  });

  it("the jwt section: lifetime and header", () => {
    expect(drift((p) => Object.assign(p.jwt, { ttl: "30m", kid: false }))).toEqual([
      { where: "jwt.kid", profile: "true", provider: "false" },
      { where: "jwt.ttl", profile: "3600 s", provider: "1800 s" },
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

describe("inferProfile: no credential the provider gave is written, whole or inside a text", () => {
  const OTHER_JWT = jwtOf({ alg: "HS256", typ: "JWT" }, { sub: "refresh", exp: NOW + 86_400 });
  const SECRET = `pi_3Nw_secret_${"a7c9e1".repeat(5)}`;

  it("leaves the protected answer's and payment/init's tokens out, and a token inside a URL, keeping the rest", () => {
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      [
        "protected_fresh",
        answer(200, {
          ok: true,
          refresh: OTHER_JWT,
          next: `https://provider.test/cb?state=s1&access_token=${OTHER_JWT}&x=1`,
          note: `see https://provider.test/cb#id_token=${OTHER_JWT}`,
        }),
      ],
      ["payment_init", answer(201, { payment_id: "pay_1", client_secret: SECRET, return: `https://provider.test/r?session=abc123def456&y=2` })],
    ]);
    const { profile } = inferProfile(obs, "acme");
    expect(profile.protected?.body).toEqual({
      ok: true,
      refresh: REDACTED,
      next: `https://provider.test/cb?state=s1&access_token=${REDACTED}&x=1`,
      note: `see https://provider.test/cb#id_token=${REDACTED}`,
    });
    expect(profile.paymentInit?.body).toEqual({ payment_id: "{{payment_id}}", client_secret: REDACTED, return: "{{checkout_url}}" });
    expect(JSON.stringify(profile)).not.toContain(OTHER_JWT);
    expect(JSON.stringify(profile)).not.toContain(SECRET);
  });

  it("leaves out a header that carries a token inside it (a login redirect's Location)", () => {
    const obs = observations([
      ["token_body", answer(200, { token: JWT }, { location: `https://provider.test/cb#access_token=${OTHER_JWT}`, "x-env": "test" })],
    ]);
    const { profile, lines } = inferProfile(obs, "acme");
    expect(JSON.stringify(profile)).not.toContain(OTHER_JWT);
    expect(profile.headers).toEqual({ "X-Env": "test" });
    expect(lines.find((l) => l.probe === "credentials")?.cameBack).toBe("headers: Location (a token inside it)");
  });
});

describe("inferProfile: a token with exp and no iat", () => {
  it("reads the lifetime from exp and the time the answer came, to the whole minute within 2 s", () => {
    const noIat = jwtOf({ alg: "RS256", typ: "JWT" }, { sub: "m-1", exp: NOW + 3601 });
    const { profile, lines } = inferProfile(
      observations([["token_body", answer(200, { access_token: noIat, expires_in: 3600, expiresAt: new Date((NOW + 3601) * 1000).toISOString() })]]),
      "go",
    );
    expect(profile.jwt?.ttl).toBe("1h");
    expect(profile.token.body).toEqual({ access_token: "{{access_token}}", expires_in: "{{expires_in}}", expiresAt: "{{expires_at:rfc3339-ms}}" });
    expect(lines.find((l) => l.probe === "jwt")?.inferred).toContain("ttl 1h: the JWT has no iat, so its exp less the time the answer came");
    const past = jwtOf({ alg: "RS256" }, { sub: "m-1", exp: NOW - 10 });
    const stale = inferProfile(observations([["token_body", answer(200, { access_token: past })]]), "go");
    expect(stale.profile.jwt?.ttl).toBeUndefined();
    expect(stale.lines.find((l) => l.probe === "jwt")?.inferred).toContain("the JWT has no exp (or it had passed)");
  });
});

describe("inferProfile: times finer than a millisecond", () => {
  it("a .NET time (seven fraction digits) that differs between two identical probes is {{now:rfc3339-100ns}}, not a constant", () => {
    const at = (ms: number, ticks: string) => `${new Date(NOW * 1000 + ms).toISOString().slice(0, 19)}.${ticks}Z`;
    const refused = (time: string) => answer(401, { error: "invalid_client", timestamp: time });
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      ["wrong_secret", refused(at(0, "1932999"))],
    ]);
    obs.repeats = [{ probe: "wrong_secret", sent: "again", answer: refused(at(1000, "2040017")) }];
    const { profile } = inferProfile(obs, "dotnet");
    expect(JSON.stringify(profile)).toContain('"timestamp":"{{now:rfc3339-100ns}}"');
  });
});

describe("inferProfile: a W3C trace id", () => {
  it("is per request by its shape, seen once in a refusal: {{request_id}} with requestId traceparent", () => {
    const trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    const obs = observations([
      ["token_body", answer(200, { token: JWT })],
      ["wrong_secret", answer(401, { error: "invalid_client", traceId: trace })],
    ]);
    const { profile } = inferProfile(obs, "aspnet");
    expect(JSON.stringify(profile)).not.toContain(trace);
    expect(JSON.stringify(profile)).toContain('"traceId":"{{request_id}}"');
    expect(profile.requestId).toBe("traceparent");
  });
});
