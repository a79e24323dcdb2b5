import { Faker, en } from "@faker-js/faker";
import { AccessTokens } from "./access-tokens.js";
import { SandboxClock } from "./clock.js";
import { ConfigError, resolveSettings, type SandboxSettings, type SettingsInput } from "./config.js";
import type { RequestTrace, SandboxContext } from "./context.js";
import type { SandboxRequest, SandboxResponse } from "./http-types.js";
import { KeyStore } from "./keys.js";
import { DEFAULT_MERCHANT, MerchantRegistry, type MerchantInput } from "./merchants.js";
import { problemResponse } from "./problem.js";
import { redactQuery } from "./redact.js";
import { route } from "./router.js";
import { TokenLedger } from "./token-ledger.js";
import { VERSION } from "./version.js";
import { SandboxError } from "./errors.js";

export interface SandboxOptions extends SettingsInput {
  /** The merchants to serve; by default the built-in one of DESIGN.md (`sandbox-api-key`). */
  merchants?: MerchantInput[];
  /** Seed for every generated value (payment ids, jti): same seed, same sequence. Default 1. */
  seed?: number;
  /**
   * The signing key: a PKCS#8 PEM or a private JWK (JSON) for RS256/ES256, a secret of at least
   * 32 bytes for HS256. Give the same key to several replicas so they accept each other's tokens.
   */
  signingKey?: string;
  /** Start with the sandbox clock frozen at this instant. */
  frozenAt?: Date | number | string;
  /** Called once per request, after the response is made, with nothing secret in it. */
  onRequest?: (entry: RequestLogEntry) => void;
  /** Called when a request hit a bug of ours (the client gets a 500 problem). */
  onInternalError?: (error: unknown, entry: RequestLogEntry) => void;
}

/** One line of the request log. Values that could be secret are never here in clear. */
export interface RequestLogEntry {
  /** Wall-clock time the request arrived (ISO 8601). */
  time: string;
  method: string;
  path: string;
  /** The query string with secret-looking values redacted. */
  query: string;
  status: number;
  durationMs: number;
  endpoint: RequestTrace["endpoint"];
  merchant?: string;
  tokenId?: string;
  /** The refusal's stable code, when the request was refused. */
  code?: string;
}

export interface Sandbox {
  /** Handles one request: the whole auth model, framework-free. Never throws. */
  handle(request: SandboxRequest): Promise<SandboxResponse>;
  readonly clock: SandboxClock;
  readonly settings: SandboxSettings;
  readonly merchants: MerchantRegistry;
  readonly keys: KeyStore;
  readonly ledger: TokenLedger;
  readonly tokens: AccessTokens;
  readonly version: string;
}

/**
 * Builds one sandbox: settings, merchants, keys, clock and token ledger, all its own. Two sandboxes
 * in one process share nothing. Throws ConfigError for an option that cannot be used.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const settings = resolveSettings(options);
  const merchants = new MerchantRegistry(options.merchants ?? [DEFAULT_MERCHANT]);
  const clock = new SandboxClock(options.frozenAt === undefined ? {} : { frozenAt: toInstant(options.frozenAt) });
  const keys = await KeyStore.create(settings.algorithm, options.signingKey);
  const ledger = new TokenLedger();
  const tokens = new AccessTokens(settings, keys, merchants, ledger);
  const faker = new Faker({ locale: [en] });
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) throw new ConfigError(`seed must be a whole number, got ${String(options.seed)}`, "seed");
  faker.seed(seed);

  const ctx: SandboxContext = {
    version: VERSION,
    settings,
    clock,
    merchants,
    keys,
    ledger,
    tokens,
    faker,
    scenarioNames: () => ["default"],
  };

  async function handle(request: SandboxRequest): Promise<SandboxResponse> {
    const started = performance.now();
    const r = route(request.path);
    const trace: RequestTrace = { endpoint: r.name };
    let response: SandboxResponse;
    let thrown: unknown;
    try {
      response = await r.endpoint(request, ctx, trace);
      if (r.headers) response = { ...response, headers: { ...response.headers, ...r.headers(ctx) } };
    } catch (e) {
      thrown = e;
      response = problemResponse(e, request.path, r.headers?.(ctx));
    }
    const entry: RequestLogEntry = {
      time: new Date().toISOString(),
      method: request.method,
      path: request.path,
      query: redactQuery(request.query),
      status: response.status,
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      endpoint: trace.endpoint,
      ...(trace.merchantId ? { merchant: trace.merchantId } : {}),
      ...(trace.tokenId ? { tokenId: trace.tokenId } : {}),
      ...(thrown instanceof SandboxError ? { code: thrown.code } : thrown ? { code: "internal_error" } : {}),
    };
    if (thrown !== undefined && !(thrown instanceof SandboxError)) options.onInternalError?.(thrown, entry);
    options.onRequest?.(entry);
    return response;
  }

  return { handle, clock, settings, merchants, keys, ledger, tokens, version: VERSION };
}

function toInstant(value: Date | number | string): Date | number {
  if (typeof value !== "string") return value;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new ConfigError(`frozenAt '${value}' is not a date; write it like 2026-01-01T00:00:00Z`);
  return d;
}
