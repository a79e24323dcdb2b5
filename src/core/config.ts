import { parseDurationSeconds } from "./duration.js";
import { DURATION_LIMITS } from "./duration-limits.js";

/**
 * Settings of one sandbox, their defaults (docs/architecture.md, "Defaults and published values") and their
 * validation. Every setting a user can pass is checked here once, with an error that names the
 * setting, what was given and what is accepted.
 */

export const ALGORITHMS = ["RS256", "ES256", "HS256"] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

export const PRECEDENCES = ["must_match", "header", "body", "reject_both"] as const;
/** What to do when a credential comes both in the JSON body and in its header. */
export type CredentialPrecedence = (typeof PRECEDENCES)[number];

export const LOGIN_MODES = ["deprecated", "gone"] as const;
export type LoginMode = (typeof LOGIN_MODES)[number];

/** Whether payment and cashout take the deprecated login's token (a Symfony API's other firewalled routes do). */
export const LOGIN_TOKEN_MODES = ["accepted", "refused"] as const;
export type LoginTokenMode = (typeof LOGIN_TOKEN_MODES)[number];

export const SCOPES = ["payment", "cashout"] as const;
export type Scope = (typeof SCOPES)[number];

/** Where payment/init looks for the merchant payment token. */
export type PaymentTokenTransport = { kind: "authorization" } | { kind: "header"; name: string } | { kind: "body"; field: string };

/** The longest token lifetime: ten years keeps every exp a date that clients and the journal can carry. */
export const MAX_TOKEN_TTL_SECONDS = DURATION_LIMITS.tokenTtl.ms / 1000;
/** The same limit, as messages state it. */
export const MAX_TOKEN_TTL_TEXT = DURATION_LIMITS.tokenTtl.text;

export interface SandboxSettings {
  tokenTtlSeconds: number;
  leewaySeconds: number;
  algorithm: Algorithm;
  issuer: string;
  audience: string;
  credentialPrecedence: CredentialPrecedence;
  disabledMerchantStatus: 401 | 403;
  loginMode: LoginMode;
  /** The login's token (typ JWT) on payment and cashout: accepted with the login's deprecation headers, or refused. */
  loginToken: LoginTokenMode;
  paymentTokenTransport: PaymentTokenTransport;
  /** Largest request body accepted, in bytes; larger ones get 413. */
  maxBodyBytes: number;
  /** When the deprecated login was deprecated and when it goes away (RFC 9745 / RFC 8594 headers). */
  loginDeprecatedAt: Date;
  loginSunsetAt: Date;
}

/** Settings as a user writes them: durations may be "1h", the transport may be "header:X-Payment-Token". */
export interface SettingsInput {
  tokenTtl?: string | number;
  leeway?: string | number;
  algorithm?: string;
  issuer?: string;
  audience?: string;
  credentialPrecedence?: string;
  disabledMerchantStatus?: number;
  loginMode?: string;
  loginToken?: string;
  paymentTokenTransport?: string | PaymentTokenTransport;
  maxBodyBytes?: number;
  loginDeprecatedAt?: string | Date;
  loginSunsetAt?: string | Date;
}

export const DEFAULT_SETTINGS: Readonly<SandboxSettings> = Object.freeze({
  tokenTtlSeconds: 3600,
  leewaySeconds: 0,
  algorithm: "RS256",
  issuer: "https://merchant-sandbox.test",
  audience: "merchant-api",
  credentialPrecedence: "must_match",
  disabledMerchantStatus: 401,
  loginMode: "deprecated",
  loginToken: "accepted",
  paymentTokenTransport: { kind: "authorization" } as PaymentTokenTransport,
  maxBodyBytes: 64 * 1024,
  loginDeprecatedAt: new Date("2025-01-01T00:00:00Z"),
  loginSunsetAt: new Date("2027-06-30T23:59:59Z"),
});

/**
 * The defaults of createSandbox's options that are not settings (a scenario cannot change them):
 * the limits of what one sandbox keeps, its seed and its control plane. `serve`'s flags show these
 * and pass nothing when not given; the event hub's limits are EVENT_LIMIT_DEFAULTS (control/events.ts)
 * and the HTTP server's SERVER_LIMIT_DEFAULTS (adapters/node-http.ts).
 */
export const SANDBOX_DEFAULTS = Object.freeze({
  seed: 1,
  /** Requests the journal keeps. */
  journalSize: 1000,
  /** Sessions at once. */
  maxSessions: 1000,
  /** Sessions unused this long are reaped. */
  sessionIdleTtl: "30m",
  controlPlane: true,
});

/** A setting or option that cannot be used; the message says which and what is accepted. */
export class ConfigError extends Error {
  readonly code = "invalid_config";
  /**
   * @param setting The option's name in createSandbox() (`tokenTtl`), when the error is about one;
   *   the message starts with it, so the CLI can show the flag's name instead.
   */
  constructor(
    message: string,
    readonly setting?: string,
  ) {
    super(message);
    this.name = "ConfigError";
  }
}

export function resolveSettings(input: SettingsInput = {}, base: SandboxSettings = DEFAULT_SETTINGS): SandboxSettings {
  const s: SandboxSettings = { ...base };
  if (input.tokenTtl !== undefined) {
    s.tokenTtlSeconds = durationSetting("tokenTtl", input.tokenTtl);
    if (s.tokenTtlSeconds < 1) throw new ConfigError(`tokenTtl must be at least 1s, got '${input.tokenTtl}'`, "tokenTtl");
    if (s.tokenTtlSeconds > MAX_TOKEN_TTL_SECONDS) {
      throw new ConfigError(`tokenTtl must be at most ${MAX_TOKEN_TTL_TEXT}, got '${input.tokenTtl}'`, "tokenTtl");
    }
  }
  if (input.leeway !== undefined) {
    s.leewaySeconds = durationSetting("leeway", input.leeway);
    if (s.leewaySeconds * 1000 > DURATION_LIMITS.leeway.ms) {
      throw new ConfigError(`leeway must be at most ${DURATION_LIMITS.leeway.text}, got '${input.leeway}'`, "leeway");
    }
  }
  if (input.algorithm !== undefined) s.algorithm = oneOf("algorithm", input.algorithm, ALGORITHMS);
  if (input.issuer !== undefined) s.issuer = nonEmpty("issuer", input.issuer);
  if (input.audience !== undefined) s.audience = nonEmpty("audience", input.audience);
  if (input.credentialPrecedence !== undefined) s.credentialPrecedence = oneOf("credentialPrecedence", input.credentialPrecedence, PRECEDENCES);
  if (input.disabledMerchantStatus !== undefined) {
    const v = input.disabledMerchantStatus;
    if (v !== 401 && v !== 403) throw new ConfigError(`disabledMerchantStatus must be 401 or 403, got ${String(v)}`, "disabledMerchantStatus");
    s.disabledMerchantStatus = v;
  }
  if (input.loginMode !== undefined) s.loginMode = oneOf("loginMode", input.loginMode, LOGIN_MODES);
  if (input.loginToken !== undefined) s.loginToken = oneOf("loginToken", input.loginToken, LOGIN_TOKEN_MODES);
  if (input.paymentTokenTransport !== undefined) s.paymentTokenTransport = parsePaymentTokenTransport(input.paymentTokenTransport);
  if (input.maxBodyBytes !== undefined) {
    const v = input.maxBodyBytes;
    if (!Number.isInteger(v) || v < 256 || v > 16 * 1024 * 1024)
      throw new ConfigError(`maxBodyBytes must be a whole number from 256 to 16777216, got ${String(v)}`, "maxBodyBytes");
    s.maxBodyBytes = v;
  }
  if (input.loginDeprecatedAt !== undefined) s.loginDeprecatedAt = dateSetting("loginDeprecatedAt", input.loginDeprecatedAt);
  if (input.loginSunsetAt !== undefined) s.loginSunsetAt = dateSetting("loginSunsetAt", input.loginSunsetAt);
  return s;
}

/** `authorization`, `header:<Header-Name>` or `body:<field>`. */
export function parsePaymentTokenTransport(input: string | PaymentTokenTransport): PaymentTokenTransport {
  if (typeof input !== "string") {
    // The object form goes through the same checks as the string form.
    if (input?.kind === "authorization") return { kind: "authorization" };
    if (input?.kind === "header") return parsePaymentTokenTransport(`header:${input.name}`);
    if (input?.kind === "body") return parsePaymentTokenTransport(`body:${input.field}`);
    throw new ConfigError(`paymentTokenTransport must be 'authorization', 'header:<Header-Name>' or 'body:<json_field>'`, "paymentTokenTransport");
  }
  const help = "write 'authorization', 'header:<Header-Name>' or 'body:<json_field>'";
  if (input === "authorization") return { kind: "authorization" };
  const m = /^(header|body):(.+)$/.exec(input);
  if (!m) throw new ConfigError(`paymentTokenTransport '${input}' is not understood; ${help}`, "paymentTokenTransport");
  const where = m[2]!;
  if (m[1] === "header") {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(where))
      throw new ConfigError(`paymentTokenTransport header name '${where}' is not a valid HTTP header name`, "paymentTokenTransport");
    return { kind: "header", name: where.toLowerCase() };
  }
  return { kind: "body", field: where };
}

function durationSetting(name: string, value: string | number): number {
  try {
    return parseDurationSeconds(value, name);
  } catch (e) {
    throw new ConfigError((e as Error).message, name);
  }
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(`${name} '${value}' is not supported; use one of: ${allowed.join(", ")}`, name);
}

function nonEmpty(name: string, value: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new ConfigError(`${name} must be a non-empty string`, name);
  return value;
}

function dateSetting(name: string, value: string | Date): Date {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) throw new ConfigError(`${name} '${String(value)}' is not a date; write it like 2027-06-30T23:59:59Z`, name);
  return d;
}
