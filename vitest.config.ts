import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/build.ts", "test/support/key-pool.ts"],
    // One worker process runs file after file instead of a new one per file: starting a worker and
    // importing src/ again was half the time of small files (docs/performance.md). src/ holds no
    // module state (lint:layers), and every file closes its servers and restores its timers.
    isolate: false,
    // Black-box tests start real servers and child processes; give slow CI machines room, but no
    // test asserts on time.
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
