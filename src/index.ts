/**
 * merchant-sandbox as a library: build a sandbox with `createSandbox()`, then serve it over HTTP
 * (`startServer`) or in-process with msw (`merchant-sandbox/msw`).
 */
export { createSandbox, type Sandbox, type SandboxOptions, type RequestLogEntry } from "./app/sandbox.js";
export type { SandboxRequest, SandboxResponse } from "./core/http-types.js";
export { SandboxClock } from "./core/clock.js";
export type { StateStore } from "./core/state-store.js";
export { MemoryStore } from "./store/memory-store.js";
export { ConfigError, DEFAULT_SETTINGS, type SandboxSettings, type SettingsInput } from "./core/config.js";
export { DEFAULT_MERCHANT, type MerchantInput, type Merchant } from "./core/merchants.js";
export * as errors from "./core/errors.js";
export { startServer, type RunningServer, type ServerOptions } from "./adapters/node-http.js";
export { redact } from "./core/redact.js";
