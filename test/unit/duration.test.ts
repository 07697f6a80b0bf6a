import { describe, expect, test } from "bun:test";
import { DurationError, formatDuration, parseDuration, parseSecondsOrDuration } from "../../src/util/duration.ts";

describe("parseDuration", () => {
  test("single units", () => {
    expect(parseDuration("50s")).toBe(50_000);
    expect(parseDuration("10m")).toBe(600_000);
    expect(parseDuration("2h")).toBe(7_200_000);
    expect(parseDuration("7d")).toBe(604_800_000);
    expect(parseDuration("0s")).toBe(0);
  });

  test("compounds add up", () => {
    expect(parseDuration("1d10h30m")).toBe(86_400_000 + 36_000_000 + 1_800_000);
    expect(parseDuration("1h1s")).toBe(3_601_000);
    expect(parseDuration("90s")).toBe(90_000);
  });

  test("trims surrounding whitespace", () => {
    expect(parseDuration("  5s\t")).toBe(5_000);
  });

  test("allowedUnits restricts units", () => {
    expect(parseDuration("3h", "smh")).toBe(10_800_000);
    expect(() => parseDuration("1d", "smh")).toThrow(/unit "d"/);
    expect(() => parseDuration("1d", "smh")).toThrow(/s m h/);
  });

  test.each([
    ["", /empty/],
    ["   ", /empty/],
    ["10", /needs a unit/],
    ["1h30", /needs a unit/],
    ["-5s", /unexpected "-"/],
    ["1.5s", /unexpected "\."/],
    ["10 m", /unexpected " "/],
    ["10x", /unit "x"/],
    ["10ms", /unit "ms"/],
    ["10S", /unexpected "S"/],
    ["s", /unexpected "s"/],
    ["99999999999999999999s", /too large/],
    ["100000000000000d", /too large/],
  ])("rejects %p", (input, message) => {
    expect(() => parseDuration(input)).toThrow(DurationError);
    expect(() => parseDuration(input)).toThrow(message);
  });

  test("overflow from summing groups is caught", () => {
    expect(parseDuration("104249991d")).toBe(104_249_991 * 86_400_000);
    expect(() => parseDuration("104249991d104249991d")).toThrow(/too large/);
  });
});

describe("parseSecondsOrDuration", () => {
  test("bare integer means seconds", () => {
    expect(parseSecondsOrDuration("0")).toBe(0);
    expect(parseSecondsOrDuration("30")).toBe(30_000);
    expect(parseSecondsOrDuration(" 2 ")).toBe(2_000);
  });

  test("otherwise a duration", () => {
    expect(parseSecondsOrDuration("1m")).toBe(60_000);
    expect(parseSecondsOrDuration("1h30m")).toBe(5_400_000);
  });

  test("rejects bad input", () => {
    expect(() => parseSecondsOrDuration("-1")).toThrow(DurationError);
    expect(() => parseSecondsOrDuration("1.5")).toThrow(DurationError);
    expect(() => parseSecondsOrDuration("")).toThrow(DurationError);
    expect(() => parseSecondsOrDuration("99999999999999999999")).toThrow(/too large/);
  });
});

describe("formatDuration", () => {
  test.each([
    [90_061_000, "1d1h1m1s"],
    [0, "0s"],
    [60_000, "1m"],
    [86_400_000, "1d"],
    [3_600_500, "1h500ms"],
    [1_500, "1s500ms"],
    [-2_000, "-2s"],
  ])("%p → %p", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  test("round-trips with parseDuration for whole seconds", () => {
    for (const ms of [1_000, 59_000, 3_661_000, 1_209_600_000]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });
});
