import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testSandbox } from "../support/keys.js";
import { runCli, startCliServer } from "../support/cli.js";
import { DEFAULT_KEY, DEFAULT_SECRET, postJson, startTestServer, type TestServer } from "../support/server.js";

/**
 * A profile file of the user's own (nested answers, minutes, string codes), chosen by
 * createSandbox, a scenario, a session, the CLI flag and its environment variable.
 */

const ACME = `
name: acme
description: Acme Pay's test environment
token:
  headers: { X-Acme-Env: test }
  body:
    result:
      accessToken: "{{access_token}}"
      validity: "{{expires_in_minutes}}"
      expiresAt: "{{expires_at}}"
refusal:
  contentType: application/json
  body: { error: { code: "{{code}}", message: "{{message}}" } }
  wwwAuthenticate: omit
codes:
  wrong_api_secret: { code: INVALID_CREDENTIALS, status: 403 }
  unknown_api_key: { code: INVALID_CREDENTIALS }
  token_expired: { code: TOKEN_EXPIRED, body: { expired: true, at: "{{instance}}" } }
jwt:
  ttl: 30m
  issuer: https://acme.example
  audience: acme-api
`;

const dir = mkdtempSync(join(tmpdir(), "profiles-"));
const ACME_FILE = join(dir, "acme.yaml");
writeFileSync(ACME_FILE, ACME);
const TOKEN = "/api/v2/auth/token";

describe("a profile file of one's own", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ profile: ACME_FILE });
  });
  afterAll(() => t.close());

  it("answers the token exchange nested under result, validity in minutes, with its header; the jwt section sets ttl, issuer, audience", async () => {
    const r = await t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
    expect(r.status).toBe(200);
    expect(r.headers.get("x-acme-env")).toBe("test");
    const token = r.json.result.accessToken;
    expect(r.json).toEqual({ result: { accessToken: token, validity: 30, expiresAt: "2026-01-01T00:30:00.000Z" } });
    const claims = decodeJwt(token);
    expect([claims.iss, claims.aud, claims.exp! - claims.iat!]).toEqual(["https://acme.example", "acme-api", 1800]);
    expect((await t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it("answers refusals with the provider's string codes and statuses, without WWW-Authenticate; the journal keeps the sandbox's codes", async () => {
    t.sandbox.reset();
    const wrong = await t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: "wrong-secret-x" }));
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get("content-type")).toBe("application/json");
    expect(wrong.headers.get("www-authenticate")).toBeNull();
    expect(wrong.json).toEqual({
      error: {
        code: "INVALID_CREDENTIALS",
        message: "The api_secret does not match the api_key 'sandbox-api-key'. Check that the secret belongs to this key and was not rotated.",
      },
    });
    const unknown = await t.call(TOKEN, postJson({ api_key: "nobody", api_secret: "x" }));
    expect([unknown.status, unknown.json.error.code]).toEqual([401, "INVALID_CREDENTIALS"]);
    // A code the profile does not list: refusal.body with the sandbox's code.
    const missing = await t.call("/api/v2/payment/x");
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({
      error: {
        code: "credentials_missing",
        message: "No credentials were sent. Send the access token as 'Authorization: Bearer <token>' (get one from POST /api/v2/auth/token).",
      },
    });
    expect(t.sandbox.journal.list({}).map((e) => [e.status, e.code])).toEqual([
      [403, "wrong_api_secret"],
      [401, "unknown_api_key"],
      [401, "credentials_missing"],
    ]);
  });

  it("a code with a body of its own answers that body", async () => {
    t.sandbox.reset();
    const r = await t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
    t.sandbox.clock.advance(31 * 60_000);
    try {
      const expired = await t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${r.json.result.accessToken}` } });
      expect(expired.status).toBe(401);
      expect(expired.json).toEqual({ expired: true, at: "/api/v2/payment/x" });
    } finally {
      t.sandbox.reset();
    }
  });

  it("a flag given to createSandbox wins over the profile's jwt section", async () => {
    const sandbox = await testSandbox({ profile: ACME_FILE, issuer: "https://mine.example" });
    expect([sandbox.settings.issuer, sandbox.settings.audience, sandbox.settings.tokenTtlSeconds]).toEqual([
      "https://mine.example",
      "acme-api",
      1800,
    ]);
  });

  it("a scenario's settings.profile is read relative to the scenario file", async () => {
    const scenario = join(dir, "acme-scenario.yaml");
    writeFileSync(
      scenario,
      [
        "name: acme-scenario",
        "description: Acme's merchant",
        "settings: { profile: ./acme.yaml }",
        "merchants:",
        "  - { id: acme_m, api_key: acme-key, api_secret: acme-secret, payment_token: acme-pt }",
      ].join("\n"),
    );
    const s = await startTestServer({ scenarios: [scenario] });
    try {
      const acme = await s.call(TOKEN, postJson({ api_key: "acme-key", api_secret: "acme-secret" }));
      expect(Object.keys(acme.json)).toEqual(["result"]);
      // The default merchant's scenario keeps the sandbox's profile (oauth).
      const other = await s.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
      expect(Object.keys(other.json)).toEqual(["access_token", "token_type", "expires_in"]);
    } finally {
      await s.close();
    }
  });
});

describe("a profile's jwt section: typ and merchantClaim", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      profile: { name: "claims", jwt: { typ: "JWT", merchantClaim: "merchant_id", alg: "ES256" } },
    });
  });
  afterAll(() => t.close());

  it("issues tokens of that typ with the merchant id under that claim, and verifies and attributes them by it", async () => {
    const r = await t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
    const token = r.json.access_token;
    expect(decodeProtectedHeader(token)).toMatchObject({ typ: "JWT", alg: "ES256" });
    expect(decodeJwt(token).merchant_id).toBe("merchant_sandbox_default");
    const call = await t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${token}` } });
    expect([call.status, call.json.merchant_id]).toEqual([200, "merchant_sandbox_default"]);
    expect(t.sandbox.journal.list({}).at(-1)).toMatchObject({ merchant: "merchant_sandbox_default", status: 200 });
    expect(t.sandbox.journal.list({}).at(-1)?.unverified).toBeUndefined();
    // The login's token (typ JWT too, without client_id) is told apart from an access token: accepted
    // as the login's, with its Deprecation header (loginToken accepted, the default) …
    const login = await t.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
    const accepted = await t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${login.json.token}` } });
    expect([accepted.status, accepted.json.merchant_id, accepted.headers.get("deprecation")]).toEqual([
      200,
      "merchant_sandbox_default",
      "@1735689600",
    ]);
    expect(call.headers.get("deprecation")).toBeNull();
    // … and refused as no access token with loginToken refused.
    const strict = await startTestServer({
      profile: { name: "claims", jwt: { typ: "JWT", merchantClaim: "merchant_id", alg: "ES256" } },
      loginToken: "refused",
    });
    try {
      const strictLogin = await strict.call("/api/login_check", postJson({ username: "merchant@sandbox.test", password: "sandbox-password" }));
      const refused = await strict.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${strictLogin.json.token}` } });
      expect([refused.status, refused.json.code]).toEqual([401, "token_not_access_token"]);
      const strictToken = (await strict.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }))).json.access_token;
      expect((await strict.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${strictToken}` } })).status).toBe(200);
    } finally {
      await strict.close();
    }
    // Minted tokens follow the same format.
    const minted = await t.sandbox.mintToken();
    expect(decodeProtectedHeader(minted.token).typ).toBe("JWT");
    expect((await t.call("/api/v2/payment/x", { headers: { authorization: `Bearer ${minted.token}` } })).status).toBe(200);
  });
});

describe("a session with a profile", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("answers the session's merchant in the chosen profile, everyone else as before", async () => {
    const created = await t.call("/__sandbox/sessions", postJson({ profile: "lexik" }));
    expect(created.status).toBe(201);
    const m = created.json.merchant;
    const mine = await t.call(TOKEN, postJson({ api_key: m.api_key, api_secret: m.api_secret }));
    expect(Object.keys(mine.json)).toEqual(["token"]);
    const wrong = await t.call(TOKEN, postJson({ api_key: m.api_key, api_secret: "nope-nope" }));
    // Lexik's own text for the client; the sandbox's explanation beside it, in a header.
    expect(wrong.json).toEqual({ code: 401, message: "Invalid credentials." });
    expect(wrong.headers.get("x-sandbox-explanation")).toBe(
      `The api_secret does not match the api_key '${m.api_key}'. Check that the secret belongs to this key and was not rotated.`,
    );
    const others = await t.call(TOKEN, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
    expect(Object.keys(others.json)).toEqual(["access_token", "token_type", "expires_in"]);
  });

  it("refuses an unknown profile, and any path, with 400 session_profile_invalid", async () => {
    for (const [profile, message] of [
      [
        "lexic",
        `"profile": 'lexic' is not a profile of this sandbox; did you mean 'lexik'?; use one of: oauth, lexik, spring, laravel, camel, envelope`,
      ],
      ["/etc/passwd", `"profile": '/etc/passwd' is not a profile of this sandbox; use one of: oauth, lexik, spring, laravel, camel, envelope`],
    ]) {
      const r = await t.call("/__sandbox/sessions", postJson({ profile }));
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect([r.json.code, r.json.detail]).toEqual(["session_profile_invalid", message]);
    }
    const r = await t.call("/__sandbox/sessions", postJson({ profile: 7 }));
    expect([r.status, r.json.code]).toEqual([400, "session_profile_invalid"]);
  });
});

describe("serve --profile", () => {
  it("answers in the profile named by the flag, or by MERCHANT_SANDBOX_PROFILE", async () => {
    for (const [args, env] of [
      [["--profile", "camel"], {}],
      [[], { MERCHANT_SANDBOX_PROFILE: "camel" }],
    ] as Array<[string[], Record<string, string>]>) {
      const cli = await startCliServer(args, env);
      try {
        const r = await fetch(`${cli.url}${TOKEN}`, postJson({ api_key: DEFAULT_KEY, api_secret: DEFAULT_SECRET }));
        const body = await r.json();
        expect(Object.keys(body)).toEqual(["accessToken", "tokenType", "expiresIn"]);
        expect(decodeProtectedHeader(body.accessToken).typ).toBe("at+jwt");
      } finally {
        cli.child.kill("SIGKILL");
      }
    }
  });

  it("validate checks a scenario's settings.profile: an unknown name at the setting, a profile file's problems in that file", async () => {
    const typo = join(dir, "typo-scenario.yaml");
    writeFileSync(
      typo,
      "name: typo\ndescription: d\nsettings: { profile: lexk }\nmerchants:\n  - { id: t, api_key: typo-key, api_secret: typo-secret, payment_token: typo-pt }\n",
    );
    const cli = runCli(["validate", typo]);
    expect(await cli.exited).toBe(1);
    expect(cli.stdout()).toBe(
      `${typo}:3:22: settings.profile: 'lexk' is not a built-in profile; did you mean 'lexik'? (built-in: oauth, lexik, spring, laravel, camel, envelope); or give the path of a profile file (.yaml, .yml or .json)\n`,
    );
  });

  it("a bad profile stops the start with the located problem and exit 2", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "name: bad\ntoken:\n  body: { t: '{{acces_token}}' }\n");
    const cli = runCli(["serve", "--port", "0", "--profile", bad]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toBe(
      `merchant-sandbox: a response profile does not load, nothing was started:\n${bad}:3:14: token.body.t: unknown placeholder '{{acces_token}}'; did you mean 'access_token'? (token.body may use: request_id, now, method, path, route, count_down, count_up, fresh, status, status_text, access_token, token_type, expires_in, expires_in_minutes, expires_at, expires_at_unix, issued_at, scope, refresh_token, id_token)\n`,
    );
    const typo = runCli(["serve", "--port", "0", "--profile", "lexk"]);
    expect(await typo.exited).toBe(2);
    expect(typo.stderr()).toBe(
      "merchant-sandbox: a response profile does not load, nothing was started:\nprofile: 'lexk' is not a built-in profile; did you mean 'lexik'? (built-in: oauth, lexik, spring, laravel, camel, envelope); or give the path of a profile file (.yaml, .yml or .json)\n",
    );
  });
});
