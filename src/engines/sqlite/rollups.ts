import type { Database } from "bun:sqlite";
import { Part, type RollupRow, type RollupStorage, type RollupWrite } from "../../metrics/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";

/** Usage rollups on SQLite: one upsert per row, merged by the rules of `mergePart`. */
export class SqliteRollupStore implements RollupStorage {
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
  async write(rows: RollupWrite[]): Promise<void> {
    if (rows.length > 0) this.writeAll(rows);
  }
  async range(owner: string, metric: string, res: number, fromMin: number, toMin: number): Promise<RollupRow[]> {
    return this.selectRange.all(owner, metric, res, fromMin, toMin);
  }
  async gaugeBefore(owner: string, metric: string, res: number, beforeMin: number): Promise<number | null> {
    return this.selectGaugeBefore.get(owner, metric, res, beforeMin)?.value ?? null;
  }
  async prune(beforeMin: number): Promise<number> {
    return this.deleteOld.run(beforeMin).changes;
  }
  async deleteOwner(_tx: WriteTx, owner: string): Promise<void> {
    this.deleteOwnerRows.run(owner);
  }
}
