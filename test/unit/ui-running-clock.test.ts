import { describe, expect, it } from "vitest";
import { clockAt } from "../../ui/src/running-clock.js";

/** The page's one running-clock formula: the clock panel, the timeline's right edge and the clock-move marks all read it. */
describe("clockAt", () => {
  const readAt = 1_000_000;

  it("carries a running clock forward by the time passed since it was read", () => {
    expect(clockAt({ now: "2026-01-01T00:00:00.000Z", frozen: false }, readAt, readAt + 61_500)).toBe("2026-01-01T00:01:01.500Z");
  });

  it("gives the reading itself at the moment it was read", () => {
    expect(clockAt({ now: "2026-01-01T00:00:00.000Z", frozen: false }, readAt, readAt)).toBe("2026-01-01T00:00:00.000Z");
  });

  it("leaves a frozen clock where it was read, its text unchanged", () => {
    expect(clockAt({ now: "2026-01-01T00:00:00Z", frozen: true }, readAt, readAt + 3_600_000)).toBe("2026-01-01T00:00:00Z");
  });

  it("shows a reading that does not parse as it came, rather than throwing", () => {
    expect(clockAt({ now: "not a time", frozen: false }, readAt, readAt + 1000)).toBe("not a time");
  });
});
