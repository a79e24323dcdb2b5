import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { MerchantSandboxContainer } from "../../src/adapters/testcontainers.js";

// What merchant-sandbox/testcontainers checks before any engine is asked, with the sandbox's own
// rules and messages (parseRedisUrl, adminTokenSetting); the rest runs against a real engine in
// test/package/testcontainers.test.ts.

/** The message withState throws for `value`, or "no error". */
function stateRefusal(value: string): string {
  try {
    new MerchantSandboxContainer().withState(value);
    return "no error";
  } catch (error) {
    return (error as Error).message;
  }
}

describe("MerchantSandboxContainer's settings", () => {
  it("refuses a value that is not a Redis URL as serve --state does, never quoting what may be the password", () => {
    const secret = "s3cret-redis-password-0123";
    expect(stateRefusal(secret)).toBe(
      'withState: The state URL "***" is not a URL: write it as redis://[:PASSWORD@]HOST:PORT[/DB] (or rediss:// for TLS); in a password, write / ? # @ and other reserved characters %-escaped (%2F %3F %23 %40).',
    );
    expect(stateRefusal(`redis:/:${secret}@host`)).toBe(
      'withState: The state URL "redis:/***@host" names no host: write it as redis://[:PASSWORD@]HOST:PORT[/DB] (or rediss:// for TLS).',
    );
  });

  it("takes redis:// and rediss:// in any case, as the sandbox does", () => {
    expect(stateRefusal("REDIS://redis:6379")).toBe("no error");
    expect(stateRefusal("rediss://:pw@redis:6380/1")).toBe("no error");
  });

  it("refuses an admin token the sandbox would refuse, with the sandbox's reason", () => {
    expect(() => new MerchantSandboxContainer().withAdminToken("short")).toThrow(
      "withAdminToken: adminToken must be at least 16 characters, got 5: a short token can be guessed by a web page or a neighbour on the network trying tokens. Use a random one, e.g. from `openssl rand -hex 16`, or leave the option out to run without one on a loopback address.",
    );
  });

  it("loads through require() too (no top-level await), for a CommonJS test setup", () => {
    const required = createRequire(import.meta.url)("../../dist/adapters/testcontainers.js");
    expect(typeof required.MerchantSandboxContainer).toBe("function");
  });
});
