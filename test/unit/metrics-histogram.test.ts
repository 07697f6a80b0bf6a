import { describe, expect, test } from "bun:test";
import { binBounds, binOf, emptySummary, quantile, type LatencySummary } from "../../src/metrics/histogram.ts";

function summarize(samples: number[]): LatencySummary {
  const s = emptySummary();
  for (const v of samples) {
    s.count++;
    s.sum += v;
    s.min = Math.min(s.min, v);
    s.max = Math.max(s.max, v);
    const bin = binOf(v);
    s.bins.set(bin, (s.bins.get(bin) ?? 0) + 1);
  }
  return s;
}

describe("latency histogram", () => {
  test("every value falls inside its bin", () => {
    for (const v of [0, 0.005, 0.01, 0.5, 1, 7.3, 99, 1234.5, 60_000]) {
      const [low, high] = binBounds(binOf(v));
      expect(v).toBeGreaterThanOrEqual(low);
      expect(v).toBeLessThan(high);
    }
  });

  test("p99 of 1..200 ms is 198 ms within the bin width (±4.5%)", () => {
    const p99 = quantile(summarize(Array.from({ length: 200 }, (_, i) => i + 1)), 0.99);
    expect(Math.abs(p99 - 198) / 198).toBeLessThan(0.045);
  });

  test("p99 ignores the slowest 1% and is exact for a repeated value", () => {
    const samples = [...new Array(199).fill(20), 900, 950];
    // 201 samples: rank ceil(0.99·201) = 199 → still 20 ms
    expect(quantile(summarize(samples), 0.99)).toBe(20);
    expect(quantile(summarize([5, 5, 5]), 0.99)).toBe(5);
  });

  test("with 100 samples or fewer, p99 is exactly the largest one", () => {
    expect(quantile(summarize([1, 2, 3, 1000]), 0.99)).toBe(1000);
    expect(quantile(summarize(Array.from({ length: 100 }, (_, i) => i + 0.5)), 0.99)).toBe(99.5);
  });

  test("p99 of 1..1000 ms is 990 ms within ±4.5%", () => {
    const p99 = quantile(summarize(Array.from({ length: 1000 }, (_, i) => i + 1)), 0.99);
    expect(Math.abs(p99 - 990) / 990).toBeLessThan(0.045);
  });

  test("no samples → 0", () => {
    expect(quantile(emptySummary(), 0.99)).toBe(0);
  });
});
