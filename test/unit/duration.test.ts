import { describe, expect, it } from "vitest";
import { parseDuration, parseDurationSeconds } from "../../src/core/duration.js";

const HELP = "write it like 90s, 59m, 1h, 1h30m, 500ms or a number of seconds";

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["59m", 3_540_000],
    ["1h", 3_600_000],
    ["1h30m", 5_400_000],
    ["500ms", 500],
    ["1d", 86_400_000],
    ["1.5h", 5_400_000],
    ["1m30s", 90_000],
    ["1s500ms", 1_500],
    ["3600", 3_600_000],
    ["0", 0],
    ["2.5", 2_500],
    ["  90s  ", 90_000],
  ])("parses %j as %d ms", (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it("takes a bare number as seconds", () => {
    expect(parseDuration(3600)).toBe(3_600_000);
    expect(parseDuration(0)).toBe(0);
    expect(parseDuration(0.5)).toBe(500);
  });

  it.each([
    "abc",
    "1h30",
    "90 s",
    "1 h",
    "5min",
    "ms",
    "-5",
    "1H",
    "h1",
    "1h-30m",
    "1e3",
    "s90",
  ])("refuses %j with a message that says what is accepted", (input) => {
    expect(() => parseDuration(input)).toThrow(RangeError);
    expect(() => parseDuration(input)).toThrow(`duration '${input}' is not a duration; ${HELP}`);
  });

  it("refuses the empty and the blank string", () => {
    expect(() => parseDuration("")).toThrow(`duration '' is not a duration; ${HELP}`);
    expect(() => parseDuration("   ")).toThrow(`duration '   ' is not a duration; ${HELP}`);
  });

  it("names the setting in the message", () => {
    expect(() => parseDuration("soon", "tokenTtl")).toThrow(`tokenTtl 'soon' is not a duration; ${HELP}`);
  });

  it.each([
    [-1, "-1"],
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
  ])("refuses the number %d", (input, shown) => {
    expect(() => parseDuration(input)).toThrow(RangeError);
    expect(() => parseDuration(input)).toThrow(`duration must be a non-negative number of seconds, got ${shown}`);
    expect(() => parseDuration(input, "leeway")).toThrow(`leeway must be a non-negative number of seconds, got ${shown}`);
  });
});

describe("parseDurationSeconds", () => {
  it("returns whole seconds", () => {
    expect(parseDurationSeconds("1h")).toBe(3600);
    expect(parseDurationSeconds("90s")).toBe(90);
    expect(parseDurationSeconds(60)).toBe(60);
    expect(parseDurationSeconds("1499ms")).toBe(1);
    expect(parseDurationSeconds("1500ms")).toBe(2);
  });

  it("passes the name through to the message", () => {
    expect(() => parseDurationSeconds("x", "leeway")).toThrow(`leeway 'x' is not a duration; ${HELP}`);
  });
});
