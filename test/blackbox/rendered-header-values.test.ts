import { afterEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * Rendered values break headers (attack round four, class 3): a profile header that prints a
 * refusal's message, when the message is not printable ASCII, is sent %-escaped (docs/profiles.md),
 * never a 500.
 */

const opened: TestServer[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

async function withMessage(message: string): Promise<TestServer> {
  const server = await startTestServer({
    profile: {
      name: "rendered-headers",
      headers: { "X-Route": "{{route}}" },
      codes: { credentials_missing: { message, headers: { "X-Error": "{{message}}", "X-Said": "said: {{message}}" } } },
    },
  });
  opened.push(server);
  return server;
}

describe("rendered values break headers", () => {
  it.each([
    ["Cyrillic", "Токен не найден", "%D0%A2%D0%BE%D0%BA%D0%B5%D0%BD %D0%BD%D0%B5 %D0%BD%D0%B0%D0%B9%D0%B4%D0%B5%D0%BD"],
    ["CR LF", "Missing\r\nSet-Cookie: planted=1", "Missing%0D%0ASet-Cookie: planted=1"],
    ["NUL-and-tab", "a\u0000b\tc", "a%00b\tc"],
    ["lone-surrogate", "x\ud800y", "x%EF%BF%BDy"],
  ])("a %s message is %-escaped in the headers that print it, and the refusal is still 401", async (_, message, escaped) => {
    const server = await withMessage(message);
    const r = await server.call("/api/v2/payment/p_1");
    expect(r.status).toBe(401);
    expect(r.headers.get("x-error")).toBe(escaped);
    expect(r.headers.get("x-said")).toBe(`said: ${escaped}`);
    expect(r.headers.get("set-cookie")).toBeNull();
    expect(r.headers.get("x-route")).toBe("api/v2/payment/p_1");
  });
});
