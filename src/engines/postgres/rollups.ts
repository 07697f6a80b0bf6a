import type { SQL } from "bun";
import { Part, type RollupRow, type RollupStorage, type RollupWrite } from "../../metrics/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { sqlOf } from "./tick.ts";
import { num } from "./values.ts";

/**
 * Usage rollups on PostgreSQL. The metrics engine sums a node's counts in memory and flushes them
 * outside the writes (`write`, one upsert statement on the pool); the upsert merges every node's
 * counts into the same rows (sums add up, max/min/gauge merge), so a statistic read on any node
 * counts all. Only `deleteOwner` runs inside a write.
 */
export class PgRollupStore implements RollupStorage {
  constructor(private readonly sql: SQL) {}

  /** One statement, so all or nothing is stored (the metrics engine keeps the counts when it fails). */
  async write(rows: RollupWrite[]): Promise<void> {
    if (rows.length === 0) return;
    // Each bucket appears once: the metrics engine merged the rows per bucket before.
    await this.sql`
      INSERT INTO usage_rollups (owner, metric, res, bucket, part, value, at_ms)
      SELECT * FROM unnest(${rows.map((r) => r.owner)}::text[], ${rows.map((r) => r.metric)}::text[],
        ${rows.map((r) => r.res)}::bigint[], ${rows.map((r) => r.bucket)}::bigint[], ${rows.map((r) => r.part)}::bigint[],
        ${rows.map((r) => r.value)}::float8[], ${rows.map((r) => r.atMs)}::bigint[])
      ON CONFLICT (owner, metric, res, bucket, part) DO UPDATE SET
        value = CASE excluded.part
          WHEN ${Part.max} THEN greatest(usage_rollups.value, excluded.value)
          WHEN ${Part.min} THEN least(usage_rollups.value, excluded.value)
          WHEN ${Part.gauge} THEN
            CASE WHEN excluded.at_ms >= usage_rollups.at_ms THEN excluded.value ELSE usage_rollups.value END
          ELSE usage_rollups.value + excluded.value END,
        at_ms = greatest(usage_rollups.at_ms, excluded.at_ms)`;
  }

  async range(owner: string, metric: string, res: number, fromMin: number, toMin: number): Promise<RollupRow[]> {
    const rows = await this.sql`
      SELECT bucket, part, value, at_ms FROM usage_rollups
      WHERE owner = ${owner} AND metric = ${metric} AND res = ${res} AND bucket >= ${fromMin} AND bucket < ${toMin}`;
    return rows.map((r: Record<string, unknown>) => ({
      bucket: num(r.bucket),
      part: num(r.part),
      value: num(r.value),
      at_ms: num(r.at_ms),
    }));
  }

  async gaugeBefore(owner: string, metric: string, res: number, beforeMin: number): Promise<number | null> {
    const [row] = await this.sql`
      SELECT value FROM usage_rollups
      WHERE owner = ${owner} AND metric = ${metric} AND res = ${res} AND bucket < ${beforeMin} AND part = ${Part.gauge}
      ORDER BY bucket DESC LIMIT 1`;
    return row ? num(row.value) : null;
  }

  async prune(beforeMin: number): Promise<number> {
    const rows = await this.sql`
      DELETE FROM usage_rollups u WHERE bucket < ${beforeMin} AND NOT (part = ${Part.gauge} AND bucket = (
        SELECT max(r.bucket) FROM usage_rollups r
        WHERE r.owner = u.owner AND r.metric = u.metric AND r.res = u.res AND r.part = ${Part.gauge}))
      RETURNING 1`;
    return rows.length;
  }

  async deleteOwner(tx: WriteTx, owner: string): Promise<void> {
    sqlOf(tx).queue("DELETE FROM usage_rollups WHERE owner = $1", [owner]);
  }
}
