/**
 * Where a sandbox's shared state lives: the StateStore implementations (src/core/state-store.ts
 * says what one does). src/app picks one from the `state` option.
 */
export { MemoryStore } from "./memory-store.js";
export type { StoreLimits } from "./store-limits.js";
