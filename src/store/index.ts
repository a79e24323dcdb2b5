/**
 * Where a sandbox's shared state lives: the StateStore implementations (src/core/state-store.ts
 * says what one does). src/app picks one from the `state` option.
 */
export { MemoryStore } from "./memory-store.js";
export { DEFAULT_PREFIX, LAYOUT_VERSION } from "./redis-layout.js";
export { DEFAULT_COMMAND_TIMEOUT_MS, openRedisStore, RedisStore, type RedisStoreOptions, StoreLayoutMismatch } from "./redis-store.js";
export { parseRedisUrl, type RedisTarget } from "./redis-url.js";
export type { StoreLimits } from "./store-limits.js";
