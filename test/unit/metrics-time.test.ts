import { describe, expect, test } from "bun:test";
import {
  daysInUtcMonth, formatGoTime, formatPeriodTime, monthGrid, parsePeriod, PERIOD_NAMES, periodGrid, pointStartMs,
  weekdayName,
} from "../../src/metrics/time.ts";

const NOW = Date.UTC(2026, 10, 22, 10, 17, 30, 250); // a Sunday
const PERIOD_X = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \+0000 UTC$/;
const GO_X = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{0,8}[1-9])? \+0000 UTC$/;

describe("period grids", () => {
  const expected = { "1h": [60, 1], "3h": [60, 3], "12h": [60, 12], "1d": [60, 24], "3d": [60, 72], "7d": [60, 168], "30d": [240, 180] };
  for (const period of PERIOD_NAMES) {
    test(`${period}: point count, step, alignment, last bucket holds now`, () => {
      const g = periodGrid(period, NOW);
      const [points, step] = expected[period];
      expect(g.points).toBe(points!);
      expect(g.stepMin).toBe(step!);
      expect(g.startMin % g.stepMin).toBe(0);
      const last = pointStartMs(g, g.points - 1);
      expect(last).toBeLessThanOrEqual(NOW);
      expect(NOW).toBeLessThan(last + g.stepMin * 60_000);
    });
  }
});

describe("parsePeriod", () => {
  test("defaults to 1h and accepts the seven names", () => {
    expect(parsePeriod(undefined)).toBe("1h");
    for (const p of PERIOD_NAMES) expect(parsePeriod(p)).toBe(p);
  });
  test("rejects anything else with a 400 naming the values", () => {
    for (const bad of ["", "2h", "1H", "30D", "toString", "__proto__"]) {
      try {
        parsePeriod(bad);
        throw new Error("accepted " + bad);
      } catch (error) {
        expect((error as { status: number }).status).toBe(400);
        expect((error as Error).message).toContain("1h, 3h, 12h, 1d, 3d, 7d, 30d");
      }
    }
  });
});

describe("timestamp text", () => {
  test("period points always carry three fraction digits", () => {
    expect(formatPeriodTime(Date.UTC(2026, 0, 2, 3, 4, 0))).toBe("2026-01-02 03:04:00.000 +0000 UTC");
    expect(formatPeriodTime(NOW)).toMatch(PERIOD_X);
  });
  test("daily points use Go's default format with trailing fraction zeros dropped", () => {
    expect(formatGoTime(Date.UTC(2026, 10, 1))).toBe("2026-11-01 00:00:00 +0000 UTC");
    expect(formatGoTime(Date.UTC(2026, 10, 1, 0, 0, 0, 500))).toBe("2026-11-01 00:00:00.5 +0000 UTC");
    expect(formatGoTime(Date.UTC(2026, 10, 1, 0, 0, 0, 120))).toBe("2026-11-01 00:00:00.12 +0000 UTC");
    expect(formatGoTime(Date.UTC(2026, 10, 1, 0, 0, 0, 7))).toBe("2026-11-01 00:00:00.007 +0000 UTC");
    for (const ms of [0, 1, 10, 100, 999]) expect(formatGoTime(NOW - 250 + ms)).toMatch(GO_X);
  });
});

describe("days", () => {
  test("the month grid covers every day of the month, future days included", () => {
    const g = monthGrid(NOW);
    expect(g.points).toBe(30);
    expect(pointStartMs(g, 0)).toBe(Date.UTC(2026, 10, 1));
    expect(daysInUtcMonth(Date.UTC(2028, 1, 10))).toBe(29);
    expect(monthGrid(Date.UTC(2027, 0, 31, 23, 59)).points).toBe(31);
  });
  test("weekday names are English, as Go prints them", () => {
    expect(weekdayName(NOW)).toBe("Sunday");
    expect(weekdayName(Date.UTC(2026, 10, 1))).toBe("Sunday");
    expect(weekdayName(Date.UTC(2026, 10, 2))).toBe("Monday");
  });
});
