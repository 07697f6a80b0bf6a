/** Small numeric helpers shared by the measurements. */

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (values: number[]) => percentile(values, 50);

/**
 * Wall-clock time in ms with sub-millisecond resolution, comparable across processes on the
 * same machine (both sides of a latency pair are stamped with it).
 */
export const wallNow = () => performance.timeOrigin + performance.now();

export const round = (n: number, digits = 0) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};
