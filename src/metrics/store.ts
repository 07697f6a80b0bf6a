import type { Database } from "bun:sqlite";

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

/** Usage rollups as every engine keeps them; only `deleteOwner` runs inside a write. */
export interface RollupStorage {
  /** Writes every row in one transaction. */
  write(rows: RollupWrite[]): void | Promise<void>;
  range(owner: string, metric: string, res: number, fromMin: number, toMin: number): RollupRow[] | Promise<RollupRow[]>;
  gaugeBefore(owner: string, metric: string, res: number, beforeMin: number): number | null | Promise<number | null>;
  prune(beforeMin: number): number | Promise<number>;
  deleteOwner(owner: string): void;
}

export class RollupStore implements RollupStorage {
  private readonly upsert;
  private readonly selectRange;
  private readonly selectGaugeBefore;
  private readonly deleteOld;
  private readonly deleteOwnerRows;
  private readonly writeAll;

  constructor(db: Database) {
    // Same rules as mergePart, applied when a bucket already has a row.
    this.upsert = db.prepare(
      `INSERT INTO usage_rollups (owner, metric, res, bucket, part, value, at_ms)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
       ON CONFLICT (owner, metric, res, bucket, part) DO UPDATE SET
         value = CASE excluded.part
           WHEN ${Part.max} THEN max(value, excluded.value)
           WHEN ${Part.min} THEN min(value, excluded.value)
           WHEN ${Part.gauge} THEN CASE WHEN excluded.at_ms >= at_ms THEN excluded.value ELSE value END
           ELSE value + excluded.value END,
         at_ms = max(at_ms, excluded.at_ms)`,
    );
    this.selectRange = db.prepare<RollupRow, [string, string, number, number, number]>(
      `SELECT bucket, part, value, at_ms FROM usage_rollups
       WHERE owner = ?1 AND metric = ?2 AND res = ?3 AND bucket >= ?4 AND bucket < ?5`,
    );
    this.selectGaugeBefore = db.prepare<{ value: number }, [string, string, number, number]>(
      `SELECT value FROM usage_rollups
       WHERE owner = ?1 AND metric = ?2 AND res = ?3 AND bucket < ?4 AND part = ${Part.gauge}
       ORDER BY bucket DESC LIMIT 1`,
    );
    // The newest gauge row of a series survives pruning: a vector count set 40 days ago still holds.
    this.deleteOld = db.prepare(
      `DELETE FROM usage_rollups WHERE bucket < ?1 AND NOT (part = ${Part.gauge} AND bucket = (
         SELECT max(r.bucket) FROM usage_rollups r WHERE r.owner = usage_rollups.owner
           AND r.metric = usage_rollups.metric AND r.res = usage_rollups.res AND r.part = ${Part.gauge}))`,
    );
    this.deleteOwnerRows = db.prepare("DELETE FROM usage_rollups WHERE owner = ?1");
    this.writeAll = db.transaction((rows: RollupWrite[]) => {
      for (const r of rows) this.upsert.run(r.owner, r.metric, r.res, r.bucket, r.part, r.value, r.atMs);
    });
  }

  /** Writes every row in one transaction. */
  write(rows: RollupWrite[]): void {
    if (rows.length > 0) this.writeAll(rows);
  }
  range(owner: string, metric: string, res: number, fromMin: number, toMin: number): RollupRow[] {
    return this.selectRange.all(owner, metric, res, fromMin, toMin);
  }
  gaugeBefore(owner: string, metric: string, res: number, beforeMin: number): number | null {
    return this.selectGaugeBefore.get(owner, metric, res, beforeMin)?.value ?? null;
  }
  prune(beforeMin: number): number {
    return this.deleteOld.run(beforeMin).changes;
  }
  deleteOwner(owner: string): void {
    this.deleteOwnerRows.run(owner);
  }
}
