/**
 * Latency histogram with log-spaced bins: 8 bins per doubling, so a bin is ~9% wide and its
 * geometric midpoint is within ~4.5% of any value in it. Bins are stored sparsely, which keeps a
 * minute with a few samples to a few rows, and bins merge by addition across minutes.
 */
const BINS_PER_DOUBLING = 8;
/** Below this (10 µs) everything is bin 0. */
const FLOOR_MS = 0.01;
export const BIN_COUNT = 256;

export function binOf(latencyMs: number): number {
  if (!(latencyMs >= FLOOR_MS)) return 0;
  const i = Math.floor(Math.log2(latencyMs / FLOOR_MS) * BINS_PER_DOUBLING) + 1;
  return Math.min(i, BIN_COUNT - 1);
}

/** [low, high) of a bin, in ms. */
export function binBounds(bin: number): [number, number] {
  if (bin === 0) return [0, FLOOR_MS];
  return [FLOOR_MS * 2 ** ((bin - 1) / BINS_PER_DOUBLING), FLOOR_MS * 2 ** (bin / BINS_PER_DOUBLING)];
}

export interface LatencySummary {
  count: number;
  sum: number;
  min: number;
  max: number;
  /** bin → number of samples */
  bins: Map<number, number>;
}

export const emptySummary = (): LatencySummary => ({ count: 0, sum: 0, min: Infinity, max: -Infinity, bins: new Map() });

/**
 * Nearest-rank quantile: the bin holding the ceil(q·n)-th smallest sample, reported as its
 * geometric midpoint clamped to the observed min and max (so one repeated value comes out exact),
 * or the exact maximum when the rank is the last sample.
 */
export function quantile(s: LatencySummary, q: number): number {
  if (s.count <= 0) return 0;
  const rank = Math.max(1, Math.ceil(q * s.count));
  // Up to 100 samples the 99th percentile is the largest one, which is kept exactly.
  if (rank >= s.count) return s.max;
  let seen = 0;
  for (const bin of [...s.bins.keys()].sort((a, b) => a - b)) {
    seen += s.bins.get(bin)!;
    if (seen >= rank) {
      const [low, high] = binBounds(bin);
      const mid = bin === 0 ? high / 2 : Math.sqrt(low * high);
      return Math.min(s.max, Math.max(s.min, mid));
    }
  }
  return s.max;
}
