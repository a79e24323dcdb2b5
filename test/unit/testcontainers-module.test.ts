import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { MerchantSandboxContainer } from "../../src/adapters/testcontainers.js";

// What merchant-sandbox/testcontainers checks before any engine is asked (the rest runs against a
// real engine in test/package/testcontainers.test.ts).
describe("MerchantSandboxContainer's settings", () => {
  it("refuses a value that is not a Redis URL without repeating it: it may be the password itself", () => {
    const secret = "s3cret-redis-password-0123";
    expect(() => new MerchantSandboxContainer().withState(secret)).toThrow(
      "withState: the value is not a Redis URL (it does not start with redis:// or rediss://). Give redis://[:password@]host:6379[/db], reachable from inside the container.",
    );
    const typo = (() => {
      try {
        new MerchantSandboxContainer().withState(`redis:/:${secret}@host`);
        return "no error";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(typo).toMatch(/^withState: the value is not a Redis URL/);
    expect(typo).not.toContain(secret);
  });

  it("takes redis:// and rediss:// in any case, as the sandbox does", () => {
    expect(() => new MerchantSandboxContainer().withState("REDIS://redis:6379")).not.toThrow();
    expect(() => new MerchantSandboxContainer().withState("rediss://:pw@redis:6380/1")).not.toThrow();
  });

  it("refuses an admin token the sandbox would refuse, saying how long it must be", () => {
    expect(() => new MerchantSandboxContainer().withAdminToken("short")).toThrow(
      'withAdminToken: the admin token has 5 characters; the sandbox refuses one shorter than 16. Use a longer random value, e.g. crypto.randomBytes(24).toString("base64url").',
    );
  });

  it("loads through require() too (no top-level await), for a CommonJS test setup", () => {
    const required = createRequire(import.meta.url)("../../dist/adapters/testcontainers.js");
    expect(typeof required.MerchantSandboxContainer).toBe("function");
  });
});
