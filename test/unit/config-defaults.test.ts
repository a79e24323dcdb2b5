import { describe, expect, it } from "vitest";
import yargs, { type Argv } from "yargs";
import { SERVER_LIMIT_DEFAULTS } from "../../src/adapters/node-http.js";
import { SERVE_COMMAND } from "../../src/cli/serve/flags.js";
import { flagOfSetting } from "../../src/cli/serve/options.js";
import { EVENT_LIMIT_DEFAULTS } from "../../src/control/events.js";
import { DEFAULT_SETTINGS, resolveSettings, SANDBOX_DEFAULTS } from "../../src/core/config.js";
import { durationText, parseDuration } from "../../src/core/duration.js";

/**
 * One source for every default: `serve`'s flags show the defaults the sandbox and the server
 * apply when the flag is not given, read from the same constants. A literal typed again in the
 * flags (or in createSandbox) that drifts from them fails here.
 */

/** Each serve flag's default as --help and docs/configuration.md show it, by camelCase name. */
function shownDefaults(): Record<string, string> {
  const y = yargs([]);
  SERVE_COMMAND.builder(y as unknown as Argv);
  const o = (
    y as unknown as { getOptions(): { key: Record<string, unknown>; default: Record<string, unknown>; defaultDescription: Record<string, string> } }
  ).getOptions();
  const shown: Record<string, string> = {};
  for (const key of Object.keys(o.key)) {
    const value = o.default[key] ?? o.defaultDescription[key];
    if (value !== undefined) shown[key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] = String(value);
  }
  return shown;
}

describe("one source of defaults: serve's flags show what the sandbox and the server apply", () => {
  const shown = shownDefaults();

  it("the settings flags' defaults resolve to DEFAULT_SETTINGS", () => {
    const settings = resolveSettings({
      tokenTtl: shown.tokenTtl,
      leeway: shown.leeway,
      algorithm: shown.alg,
      issuer: shown.issuer,
      audience: shown.audience,
      credentialPrecedence: shown.credentialPrecedence,
      paymentTokenTransport: shown.paymentTokenTransport,
      disabledMerchantStatus: Number(shown.disabledMerchantStatus),
      loginMode: shown.loginMode,
      loginToken: shown.loginToken,
      maxBodyBytes: Number(shown.maxBodyBytes),
    });
    expect(settings).toEqual(DEFAULT_SETTINGS);
  });

  it("the limits flags' defaults are SANDBOX_DEFAULTS, EVENT_LIMIT_DEFAULTS and SERVER_LIMIT_DEFAULTS", () => {
    expect({
      seed: Number(shown.seed),
      journalSize: Number(shown.journalSize),
      maxSessions: Number(shown.maxSessions),
      sessionIdleTtl: shown.sessionIdleTtl,
      controlPlane: shown.controlPlane === "true",
    }).toEqual(SANDBOX_DEFAULTS);
    expect([Number(shown.maxEventSubscribers), Number(shown.eventBufferSize)]).toEqual([
      EVENT_LIMIT_DEFAULTS.maxSubscribers,
      EVENT_LIMIT_DEFAULTS.bufferSize,
    ]);
    expect({
      maxHeaderBytes: Number(shown.maxHeaderBytes),
      maxHeaders: Number(shown.maxHeaders),
      headersTimeoutMs: parseDuration(shown.headersTimeout!),
      requestTimeoutMs: parseDuration(shown.requestTimeout!),
      writeTimeoutMs: parseDuration(shown.writeTimeout!),
    }).toEqual({
      maxHeaderBytes: SERVER_LIMIT_DEFAULTS.maxHeaderBytes,
      maxHeaders: SERVER_LIMIT_DEFAULTS.maxHeaders,
      headersTimeoutMs: SERVER_LIMIT_DEFAULTS.headersTimeoutMs,
      requestTimeoutMs: SERVER_LIMIT_DEFAULTS.requestTimeoutMs,
      writeTimeoutMs: SERVER_LIMIT_DEFAULTS.writeTimeoutMs,
    });
  });

  it("every createSandbox option a ConfigError names has its flag, derived from the flags (no second list)", () => {
    const named = [
      ["tokenTtl", "--token-ttl"],
      ["leeway", "--leeway"],
      ["algorithm", "--alg"],
      ["issuer", "--issuer"],
      ["audience", "--audience"],
      ["credentialPrecedence", "--credential-precedence"],
      ["paymentTokenTransport", "--payment-token-transport"],
      ["disabledMerchantStatus", "--disabled-merchant-status"],
      ["loginMode", "--login-mode"],
      ["loginToken", "--login-token"],
      ["seed", "--seed"],
      ["journalSize", "--journal-size"],
      ["maxSessions", "--max-sessions"],
      ["maxEventSubscribers", "--max-event-subscribers"],
      ["eventBufferSize", "--event-buffer-size"],
      ["maxBodyBytes", "--max-body-bytes"],
      ["sessionIdleTtl", "--session-idle-ttl"],
      ["adminToken", "--admin-token"],
      ["allowedHosts", "--allowed-hosts"],
    ];
    expect(named.map(([setting]) => [setting, flagOfSetting(setting!)])).toEqual(named);
    // An option of the library alone has no flag: its message keeps the option's name.
    expect([flagOfSetting("eventHeartbeatMs"), flagOfSetting("frozenAt")]).toEqual([undefined, undefined]);
  });

  it("durationText writes milliseconds as the shortest duration parseDuration reads back", () => {
    const cases: Array<[number, string]> = [
      [0, "0s"],
      [5_000, "5s"],
      [90_000, "90s"],
      [1_800_000, "30m"],
      [3_600_000, "1h"],
      [86_400_000, "1d"],
      [1_500, "1500ms"],
    ];
    expect(cases.map(([ms]) => [ms, durationText(ms)])).toEqual(cases);
    for (const [ms, text] of cases) expect(parseDuration(text)).toBe(ms);
  });
});
