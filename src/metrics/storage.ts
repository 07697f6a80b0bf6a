import type { WriteTx } from "../store/transactor.ts";

/**
 * Bucket sizes in minutes kept for every metric. A statistics grid reads the largest one that
 * divides its step: 1h→1, 3h→3, 12h/1d/3d/7d→12, 30d→180 and daily series→1440, so no request
 * reads more than 840 buckets of one metric.
 */
export const LEVELS = [1, 3, 12, 180, 1440] as const;

/** What a row holds; each part has its own merge rule (see `mergePart`). */
export const Part = { sum: 0, count: 1, max: 2, min: 3, gauge: 4, bin0: 16 } as const;

export function mergePart(part: number, old: number, oldAt: number, value: number, at: number): number {
  if (part === Part.max) return Math.max(old, value);
  if (part === Part.min) return Math.min(old, value);
  if (part === Part.gauge) return at >= oldAt ? value : old;
  return old + value;
}

export interface RollupWrite {
  owner: string;
  metric: string;
  res: number;
  bucket: number;
  part: number;
  value: number;
  atMs: number;
}

export interface RollupRow {
  bucket: number;
  part: number;
  value: number;
  at_ms: number;
}

/** Usage rollups as every engine keeps them; only `deleteOwner` runs inside a write (`tx`). */
export interface RollupStorage {
  /** Writes every row in one transaction of its own. */
  write(rows: RollupWrite[]): Promise<void>;
  range(owner: string, metric: string, res: number, fromMin: number, toMin: number): Promise<RollupRow[]>;
  gaugeBefore(owner: string, metric: string, res: number, beforeMin: number): Promise<number | null>;
  prune(beforeMin: number): Promise<number>;
  deleteOwner(tx: WriteTx, owner: string): Promise<void>;
}
