import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/build.ts", "test/support/key-pool.ts"],
    // Black-box tests start real servers and child processes; give slow CI machines room, but no
    // test asserts on time.
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
