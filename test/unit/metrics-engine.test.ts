import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { levelFor, MetricsEngine } from "../../src/metrics/engine.ts";
import { metricsMigrations } from "../../src/metrics/schema.ts";
import { SqliteRollupStore } from "../../src/engines/sqlite/rollups.ts";
import { dayGrid, MINUTE_MS, monthGrid, PERIOD_NAMES, periodGrid, pointStartMs } from "../../src/metrics/time.ts";
import { migrate, openDatabase } from "../../src/engines/sqlite/db.ts";
import { GroupCommit } from "../../src/engines/sqlite/group-commit.ts";

const NOW = Date.UTC(2026, 10, 22, 10, 17, 30); // 22 Nov 2026, 10:17:30 UTC
const DAY = 86_400_000;

let db: Database;
let clock: ManualClock;
let engine: MetricsEngine;

beforeEach(() => {
  db = openDatabase(null);
  migrate(db, metricsMigrations);
  clock = new ManualClock(NOW);
  engine = new MetricsEngine(new SqliteRollupStore(db), clock);
});
afterEach(() => {
  engine.stop();
  db.close();
});

const rowCount = () => db.query<{ n: number }, []>("SELECT count(*) AS n FROM usage_rollups").get()!.n;

describe("recording and reading", () => {
  test("a read sees what was counted a moment before (pending part is flushed first)", async () => {
    engine.count("acct", "m", 3, NOW);
    expect(rowCount()).toBe(0);
    const series = await engine.sums("acct", "m", periodGrid("1h", NOW));
    expect(series[59]).toBe(3);
    expect(rowCount()).toBeGreaterThan(0);
  });

  test("the flush timer writes pending counts without a read", async () => {
    engine.start();
    engine.count("acct", "m", 1, NOW);
    clock.advanceTo(NOW + 1000);
    expect(rowCount()).toBeGreaterThan(0);
  });

  test("samples land in the right bucket for 1h and 30d, and owners stay apart", async () => {
    const at = [NOW - 5 * MINUTE_MS, NOW - 59 * MINUTE_MS - 10_000, NOW - 61 * MINUTE_MS, NOW - 10 * DAY];
    at.forEach((ms, i) => engine.count("acct", "m", 10 ** i, ms));
    engine.count("other", "m", 1000_000, NOW);

    const hour = periodGrid("1h", NOW);
    const h = await engine.sums("acct", "m", hour);
    expect(h[54]).toBe(1); // 10:12
    expect(h[0]).toBe(10); // 09:18 (09:18:20 is 59m10s ago)
    expect(h.reduce((a, b) => a + b)).toBe(11); // 61 min and 10 days ago are outside

    const month = periodGrid("30d", NOW);
    const m = await engine.sums("acct", "m", month);
    const bucketOf = (ms: number) => Math.floor((ms / MINUTE_MS - month.startMin) / 180);
    expect(m[239]).toBe(1 + 10 + 100); // the last 3-hour bucket (09:00–12:00) holds the last three
    expect(m[bucketOf(NOW - 10 * DAY)]).toBe(1000);
    expect(m.reduce((a, b) => a + b)).toBe(1111);
  });

  test("every period reads its coarsest level and totals agree with 1-minute counting", async () => {
    for (let i = 0; i < 2000; i++) engine.count("acct", "m", 1, NOW - i * 7 * MINUTE_MS);
    for (const period of PERIOD_NAMES) {
      const grid = periodGrid(period, NOW);
      const windowStart = pointStartMs(grid, 0);
      const expected = Array.from({ length: 2000 }, (_, i) => NOW - i * 7 * MINUTE_MS).filter((t) => t >= windowStart).length;
      expect(await engine.total("acct", "m", grid)).toBe(expected);
    }
    expect(PERIOD_NAMES.map((p) => levelFor(periodGrid(p, NOW)))).toEqual([1, 3, 12, 12, 12, 12, 180]);
    expect(levelFor(monthGrid(NOW))).toBe(1440);
  });

  test("daily grids count per UTC day", async () => {
    engine.count("acct", "m", 2, Date.UTC(2026, 10, 21, 23, 59, 59));
    engine.count("acct", "m", 5, Date.UTC(2026, 10, 22, 0, 0, 0));
    expect(await engine.sums("acct", "m", dayGrid(NOW - 4 * DAY, 5))).toEqual([0, 0, 0, 2, 5]);
  });
});

describe("latency", () => {
  test("mean and p99 per bucket for a known sample set", async () => {
    // bucket 10:10: 1..200 ms; bucket 10:17: 3 samples
    for (let v = 1; v <= 200; v++) engine.observe("idx", "lat", v, Date.UTC(2026, 10, 22, 10, 10, v % 60));
    for (const v of [10, 20, 60]) engine.observe("idx", "lat", v, NOW);
    const { mean, p99 } = await engine.latency("idx", "lat", periodGrid("1h", NOW));
    expect(mean[59]).toBe(30);
    expect(p99[59]).toBe(60);
    expect(mean[52]).toBe(100.5);
    expect(Math.abs(p99[52]! - 198) / 198).toBeLessThan(0.045);
    expect(mean[0]).toBe(0);
    expect(p99[0]).toBe(0);
    // the 1d grid's 24-minute bucket 10:00–10:24 merges both minutes
    const merged = await engine.latency("idx", "lat", periodGrid("1d", NOW));
    expect(merged.mean[59]).toBeCloseTo((20100 + 90) / 203, 10);
  });
});

describe("gauges", () => {
  test("the newest value holds until the next one; the window starts from the last value before it", async () => {
    engine.gauge("idx", "count", 100, NOW - 2 * 3_600_000);
    engine.gauge("idx", "count", 150, NOW - 30 * MINUTE_MS);
    engine.gauge("idx", "count", 140, NOW - 30 * MINUTE_MS + 1000);
    engine.gauge("idx", "count", 120, NOW - 30 * MINUTE_MS - 1000); // older sample in the same minute loses
    const series = await engine.gauges("idx", "count", periodGrid("1h", NOW));
    expect(series[0]).toBe(100);
    expect(series[28]).toBe(100);
    expect(series[29]).toBe(140);
    expect(series[59]).toBe(140);
    expect(await engine.latest("idx", "count")).toBe(140);
    expect(await engine.latest("idx", "never")).toBe(0);
  });
});

describe("pruning and lifecycle", () => {
  test("drops rollups older than 30 days and the current month, keeping each gauge's newest value", async () => {
    const old = NOW - 45 * DAY;
    engine.count("acct", "m", 1, old);
    engine.gauge("idx", "count", 42, old);
    engine.count("acct", "m", 1, Date.UTC(2026, 10, 1, 0, 5)); // this month: kept
    await engine.flush();
    const before = rowCount();
    expect(await engine.prune()).toBeGreaterThan(0);
    expect(rowCount()).toBeLessThan(before);
    expect(await engine.total("acct", "m", dayGrid(old, 1))).toBe(0);
    expect(await engine.total("acct", "m", monthGrid(NOW))).toBe(1);
    expect(await engine.latest("idx", "count")).toBe(42);
    expect((await engine.gauges("idx", "count", periodGrid("1h", NOW)))[0]).toBe(42);
  });

  test("the month's first days survive when the month is longer ago than 30 days", async () => {
    const endOfMonth = Date.UTC(2027, 0, 31, 23, 0);
    clock.advanceTo(endOfMonth);
    engine.count("acct", "m", 7, Date.UTC(2027, 0, 1, 0, 30));
    await engine.prune();
    expect(await engine.total("acct", "m", monthGrid(endOfMonth))).toBe(7);
  });

  test("stop flushes; counting after stop writes through", async () => {
    engine.count("acct", "m", 1, NOW);
    engine.stop();
    expect(rowCount()).toBeGreaterThan(0);
    const n = rowCount();
    engine.count("acct", "m2", 1, NOW);
    expect(rowCount()).toBeGreaterThan(n);
  });

  test("forget removes an owner's rollups", async () => {
    engine.count("idx", "m", 1, NOW);
    engine.count("keep", "m", 1, NOW);
    await new GroupCommit(db).run((tx) => engine.forget(tx, "idx"));
    expect(await engine.total("idx", "m", periodGrid("1h", NOW))).toBe(0);
    expect(await engine.total("keep", "m", periodGrid("1h", NOW))).toBe(1);
  });
});
