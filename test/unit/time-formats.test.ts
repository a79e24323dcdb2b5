import { describe, expect, it } from "vitest";
import { readTime, timesInText } from "../../src/cli/calibrate/per-request.js";
import { formatTime, TIME_FORMATS, TIME_PATTERNS } from "../../src/profiles/time-value.js";

/** The time formats a profile prints and calibrate reads: each printed form is read back as itself. */

const AT = Date.UTC(2026, 10, 29, 6, 34, 38, 193) / 1000;
/** The formats that print no fraction of a second. */
const WHOLE_SECONDS: readonly string[] = ["rfc3339", "rfc3339-offset", "http-date", "rfc850", "ctime", "dotnet-general"];

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
        // Go's trimmed form of a time with milliseconds is the fixed three-digit form: read as that.
        format: format === "rfc3339-nano" ? "rfc3339-ms" : format,
        seconds: WHOLE_SECONDS.includes(format) ? Math.floor(AT) : AT,
      });
    }
  });

  it("reads Go's RFC3339Nano, trailing zeros trimmed, whatever its digits, and prints it so", () => {
    expect(readTime("2026-11-29T06:34:38.19329991Z")).toEqual({ format: "rfc3339-nano", seconds: AT });
    expect(readTime("2026-11-29T06:34:38.19Z")).toEqual({ format: "rfc3339-nano", seconds: Date.UTC(2026, 10, 29, 6, 34, 38, 190) / 1000 });
    expect(formatTime(Date.UTC(2026, 10, 29, 6, 34, 38, 190) / 1000, "rfc3339-nano")).toBe("2026-11-29T06:34:38.19Z");
    expect(formatTime(Date.UTC(2026, 10, 29, 6, 34, 30) / 1000, "rfc3339-nano")).toBe("2026-11-29T06:34:30Z");
  });

  it("prints the forms that are not ISO 8601 as their frameworks do, in UTC", () => {
    expect(formatTime(AT, "http-date")).toBe("Sun, 29 Nov 2026 06:34:38 GMT");
    expect(formatTime(AT, "rfc850")).toBe("Sunday, 29-Nov-26 06:34:38 GMT");
    expect(formatTime(AT, "ctime")).toBe("Sun Nov 29 06:34:38 2026");
    expect(formatTime(Date.UTC(2026, 11, 3, 6, 4, 5) / 1000, "ctime")).toBe("Thu Dec  3 06:04:05 2026");
    expect(formatTime(AT, "dotnet-general")).toBe("11/29/2026 06:34:38");
    expect(formatTime(AT, "unix-fraction")).toBe(1795934078.193);
  });

  it("reads a .NET general date and Unix seconds inside a message against the moment each stands for", () => {
    const exp = Date.UTC(2026, 10, 29, 5, 34, 44) / 1000;
    const text =
      "IDX10223: Lifetime validation failed. The token is expired. ValidTo (UTC): '11/29/2026 05:34:44', Current time (UTC): '11/29/2026 06:34:38'.";
    expect(
      timesInText(text, [
        { name: "token_expires_at", seconds: exp },
        { name: "now", seconds: AT },
      ]),
    ).toBe(
      "IDX10223: Lifetime validation failed. The token is expired. ValidTo (UTC): '{{token_expires_at:dotnet-general}}', Current time (UTC): '{{now:dotnet-general}}'.",
    );
    expect(
      timesInText(`expired at ${exp}, now ${AT}; order 1234567890123`, [
        { name: "token_expires_at", seconds: exp },
        { name: "now", seconds: AT },
      ]),
    ).toBe("expired at {{token_expires_at:unix}}, now {{now:unix-fraction}}; order 1234567890123");
    // A date no moment is near stays as it came.
    expect(timesInText("valid until '01/01/2030 00:00:00'", [{ name: "now", seconds: AT }])).toBe("valid until '01/01/2030 00:00:00'");
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
