import { describe, expect, it } from "vitest";
import { testSandbox } from "../support/keys.js";
import { ConfigError, DEFAULT_SETTINGS, parsePaymentTokenTransport, resolveSettings, type SettingsInput } from "../../src/core/config.js";

const DURATION_HELP = "write it like 90s, 59m, 1h, 1h30m, 500ms or a number of seconds";

function configError(input: SettingsInput): ConfigError {
  try {
    resolveSettings(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error(`resolveSettings(${JSON.stringify(input)}) did not throw`);
}

describe("resolveSettings: defaults", () => {
  it("returns the documented defaults (docs/configuration.md) for no input", () => {
    expect(resolveSettings()).toEqual({
      tokenTtlSeconds: 3600,
      leewaySeconds: 0,
      algorithm: "RS256",
      issuer: "https://merchant-sandbox.test",
      audience: "merchant-api",
      credentialPrecedence: "must_match",
      disabledMerchantStatus: 401,
      loginMode: "deprecated",
      loginToken: "accepted",
      paymentTokenTransport: { kind: "authorization" },
      maxBodyBytes: 65536,
      loginDeprecatedAt: new Date("2025-01-01T00:00:00Z"),
      loginSunsetAt: new Date("2027-06-30T23:59:59Z"),
    });
    expect(resolveSettings({})).toEqual(resolveSettings());
  });

  it("returns a new object and never changes the defaults", () => {
    const s = resolveSettings({ tokenTtl: "5m" });
    expect(s).not.toBe(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS.tokenTtlSeconds).toBe(3600);
    expect(Object.isFrozen(DEFAULT_SETTINGS)).toBe(true);
  });

  it("applies every valid setting", () => {
    expect(
      resolveSettings({
        tokenTtl: "15m",
        leeway: 30,
        algorithm: "ES256",
        issuer: "https://issuer.test",
        audience: "aud",
        credentialPrecedence: "reject_both",
        disabledMerchantStatus: 403,
        loginMode: "gone",
        loginToken: "refused",
        paymentTokenTransport: "body:payment_token",
        maxBodyBytes: 256,
        loginDeprecatedAt: "2025-06-01T00:00:00Z",
        loginSunsetAt: new Date("2028-01-01T00:00:00Z"),
      }),
    ).toEqual({
      tokenTtlSeconds: 900,
      leewaySeconds: 30,
      algorithm: "ES256",
      issuer: "https://issuer.test",
      audience: "aud",
      credentialPrecedence: "reject_both",
      disabledMerchantStatus: 403,
      loginMode: "gone",
      loginToken: "refused",
      paymentTokenTransport: { kind: "body", field: "payment_token" },
      maxBodyBytes: 256,
      loginDeprecatedAt: new Date("2025-06-01T00:00:00Z"),
      loginSunsetAt: new Date("2028-01-01T00:00:00Z"),
    });
  });

  it("accepts each listed value", () => {
    for (const algorithm of ["RS256", "ES256", "HS256"]) expect(resolveSettings({ algorithm }).algorithm).toBe(algorithm);
    for (const p of ["must_match", "header", "body", "reject_both"])
      expect(resolveSettings({ credentialPrecedence: p }).credentialPrecedence).toBe(p);
    expect(resolveSettings({ loginMode: "deprecated" }).loginMode).toBe("deprecated");
    expect(resolveSettings({ tokenTtl: "1s" }).tokenTtlSeconds).toBe(1);
    expect(resolveSettings({ tokenTtl: 7200 }).tokenTtlSeconds).toBe(7200);
    expect(resolveSettings({ leeway: "0" }).leewaySeconds).toBe(0);
    expect(resolveSettings({ leeway: "2m" }).leewaySeconds).toBe(120);
    expect(resolveSettings({ maxBodyBytes: 16 * 1024 * 1024 }).maxBodyBytes).toBe(16777216);
  });

  it("builds on the given base", () => {
    const base = resolveSettings({ tokenTtl: "10m", loginMode: "gone" });
    const s = resolveSettings({ leeway: "5s" }, base);
    expect(s.tokenTtlSeconds).toBe(600);
    expect(s.loginMode).toBe("gone");
    expect(s.leewaySeconds).toBe(5);
    expect(base.leewaySeconds).toBe(0);
  });
});

describe("resolveSettings: each bad value's message", () => {
  it.each<[SettingsInput, string]>([
    [{ tokenTtl: "soon" }, `tokenTtl 'soon' is not a duration; ${DURATION_HELP}`],
    [{ tokenTtl: -5 }, "tokenTtl must be a non-negative number of seconds, got -5"],
    [{ tokenTtl: "0" }, "tokenTtl must be at least 1s, got '0'"],
    [{ tokenTtl: 0 }, "tokenTtl must be at least 1s, got '0'"],
    [{ tokenTtl: "400ms" }, "tokenTtl must be at least 1s, got '400ms'"],
    // Regression: an enormous ttl made tokens whose exp no date can show.
    [{ tokenTtl: "3651d" }, "tokenTtl must be at most 3650d (ten years), got '3651d'"],
    [{ leeway: "a bit" }, `leeway 'a bit' is not a duration; ${DURATION_HELP}`],
    [{ leeway: Number.NaN }, "leeway must be a non-negative number of seconds, got NaN"],
    // Unbounded durations: a leeway of 1e30 made every token valid for ever.
    [{ leeway: "2d" }, "leeway must be at most 1d, got '2d'"],
    [{ leeway: 1e30 }, "leeway must be at most 1d, got '1e+30'"],
    [{ algorithm: "none" }, "algorithm 'none' is not supported; use one of: RS256, ES256, HS256"],
    [{ algorithm: "rs256" }, "algorithm 'rs256' is not supported; use one of: RS256, ES256, HS256"],
    [{ issuer: "" }, "issuer must be a non-empty string"],
    [{ issuer: "   " }, "issuer must be a non-empty string"],
    [{ audience: "" }, "audience must be a non-empty string"],
    [{ credentialPrecedence: "first" }, "credentialPrecedence 'first' is not supported; use one of: must_match, header, body, reject_both"],
    [{ disabledMerchantStatus: 404 }, "disabledMerchantStatus must be 401 or 403, got 404"],
    [{ loginMode: "off" }, "loginMode 'off' is not supported; use one of: deprecated, gone"],
    [{ loginToken: "maybe" }, "loginToken 'maybe' is not supported; use one of: accepted, refused"],
    [
      { paymentTokenTransport: "cookie" },
      "paymentTokenTransport 'cookie' is not understood; write 'authorization', 'header:<Header-Name>' or 'body:<json_field>'",
    ],
    [{ paymentTokenTransport: "header:X Payment" }, "paymentTokenTransport header name 'X Payment' is not a valid HTTP header name"],
    [{ maxBodyBytes: 255 }, "maxBodyBytes must be a whole number from 256 to 16777216, got 255"],
    [{ maxBodyBytes: 16 * 1024 * 1024 + 1 }, "maxBodyBytes must be a whole number from 256 to 16777216, got 16777217"],
    [{ maxBodyBytes: 1024.5 }, "maxBodyBytes must be a whole number from 256 to 16777216, got 1024.5"],
    [{ loginDeprecatedAt: "yesterday" }, "loginDeprecatedAt 'yesterday' is not a date; write it like 2027-06-30T23:59:59Z"],
    [{ loginSunsetAt: new Date("nope") }, "loginSunsetAt 'Invalid Date' is not a date; write it like 2027-06-30T23:59:59Z"],
  ])("%j → %s", (input, message) => {
    const e = configError(input);
    expect(e.message).toBe(message);
    expect(e.setting).toBe(Object.keys(input)[0]);
    expect(e.name).toBe("ConfigError");
    expect(e.code).toBe("invalid_config");
  });
});

describe("parsePaymentTokenTransport", () => {
  it("parses the three forms", () => {
    expect(parsePaymentTokenTransport("authorization")).toEqual({ kind: "authorization" });
    expect(parsePaymentTokenTransport("body:payment_token")).toEqual({ kind: "body", field: "payment_token" });
    expect(parsePaymentTokenTransport("body:token:x")).toEqual({ kind: "body", field: "token:x" });
  });

  it("lower-cases header names, as request headers arrive lower-cased", () => {
    expect(parsePaymentTokenTransport("header:X-Payment-Token")).toEqual({ kind: "header", name: "x-payment-token" });
    expect(parsePaymentTokenTransport("header:x_token")).toEqual({ kind: "header", name: "x_token" });
  });

  it.each(["", "Authorization", "header", "header:", "body:", "query:token", " authorization"])("refuses %j", (input) => {
    expect(() => parsePaymentTokenTransport(input)).toThrow(ConfigError);
    expect(() => parsePaymentTokenTransport(input)).toThrow(
      `paymentTokenTransport '${input}' is not understood; write 'authorization', 'header:<Header-Name>' or 'body:<json_field>'`,
    );
  });

  it.each(["X Payment", "X-Token:", "X(Token)", "Tök"])("refuses the header name %j", (name) => {
    expect(() => parsePaymentTokenTransport(`header:${name}`)).toThrow(`paymentTokenTransport header name '${name}' is not a valid HTTP header name`);
  });

  it("passes an already parsed transport through", () => {
    expect(parsePaymentTokenTransport({ kind: "authorization" })).toEqual({ kind: "authorization" });
    expect(parsePaymentTokenTransport({ kind: "body", field: "pt" })).toEqual({ kind: "body", field: "pt" });
  });

  it("checks an already parsed transport like the string form", () => {
    expect(() => parsePaymentTokenTransport({ kind: "header", name: "X Bad" })).toThrow(
      "paymentTokenTransport header name 'X Bad' is not a valid HTTP header name",
    );
    expect(() => parsePaymentTokenTransport({ kind: "body", field: "" })).toThrow(ConfigError);
    expect(() => parsePaymentTokenTransport({ kind: "cookie" } as never)).toThrow(
      "paymentTokenTransport must be 'authorization', 'header:<Header-Name>' or 'body:<json_field>'",
    );
  });

  // Regression test for a fixed bug (src/core/config.ts): the object form is returned unchecked, so a header name written as
  // documented ("X-Payment-Token") stays mixed-case and payment/init never finds the header (request
  // header names are lower-case). It should be normalised like the string form.
  it("normalises the header name of an already parsed transport like the string form", () => {
    expect(parsePaymentTokenTransport({ kind: "header", name: "X-Payment-Token" })).toEqual({
      kind: "header",
      name: "x-payment-token",
    });
  });
});

describe("createSandbox: unbounded durations are refused", () => {
  it.each<[Parameters<typeof testSandbox>[0], string]>([
    // 1e30 made every session creation a 500 (its expires_at is no date).
    [{ sessionIdleTtl: 1e30 }, "sessionIdleTtl must be at most 30d, got '1e+30'"],
    [{ sessionIdleTtl: "31d" }, "sessionIdleTtl must be at most 30d, got '31d'"],
    // Past setInterval's maximum node fires every millisecond instead.
    [{ eventHeartbeatMs: 2 ** 31 }, "eventHeartbeatMs must be a whole number of milliseconds from 0 (none) to 3600000 (1h), got 2147483648"],
  ])("%j → %s", async (options, message) => {
    const refused = await testSandbox(options).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).message).toBe(message);
  });
});
