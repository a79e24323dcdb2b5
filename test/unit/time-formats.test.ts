import { describe, expect, it } from "vitest";
import { readTime, timesInText } from "../../src/cli/calibrate/per-request.js";
import { formatTime, TIME_FORMATS, TIME_PATTERNS } from "../../src/profiles/time-value.js";

/** The time formats a profile prints and calibrate reads: each printed form is read back as itself. */

const AT = Date.UTC(2026, 10, 29, 6, 34, 38, 193) / 1000;

describe("time formats", () => {
  it("prints finer fractions as the frameworks do, the digits past the millisecond zeros", () => {
    expect(formatTime(AT, "rfc3339-ms")).toBe("2026-11-29T06:34:38.193Z");
    expect(formatTime(AT, "rfc3339-us")).toBe("2026-11-29T06:34:38.193000Z");
    expect(formatTime(AT, "rfc3339-100ns")).toBe("2026-11-29T06:34:38.1930000Z");
    expect(formatTime(AT, "rfc3339-ns")).toBe("2026-11-29T06:34:38.193000000Z");
  });

  it("reads every text format it prints back as that format, at that time, and matches its own pattern", () => {
    for (const format of TIME_FORMATS) {
      const printed = formatTime(AT, format);
      if (typeof printed === "number") continue;
      expect(new RegExp(`^${TIME_PATTERNS[format]}$`, "u").test(printed), format).toBe(true);
      expect(readTime(printed), format).toEqual({
        format,
        seconds: format === "rfc3339" || format === "rfc3339-offset" || format === "http-date" ? Math.floor(AT) : AT,
      });
    }
  });

  it("reads a provider's .NET and Python times, alone and inside a message", () => {
    expect(readTime("2026-11-29T06:34:38.1932999Z")).toEqual({ format: "rfc3339-100ns", seconds: AT });
    expect(readTime("2026-11-29T06:34:38.193299Z")).toEqual({ format: "rfc3339-us", seconds: AT });
    expect(timesInText("Jwt expired at 2026-11-29T06:34:38.1932999Z", [{ name: "token_expires_at", seconds: AT }])).toBe(
      "Jwt expired at {{token_expires_at:rfc3339-100ns}}",
    );
  });
});

describe("request id shapes", () => {
  it("makes a W3C traceparent that its own pattern reads, a new one each time", async () => {
    const { newRequestId, REQUEST_ID_PATTERNS } = await import("../../src/profiles/request-id.js");
    const a = newRequestId("traceparent", Date.now());
    expect(a).toMatch(new RegExp(REQUEST_ID_PATTERNS.traceparent));
    expect(newRequestId("traceparent", Date.now())).not.toBe(a);
  });
});
