import type { Migration } from "../store/migration.ts";

export const metricsMigrations: Migration[] = [
  {
    id: "metrics/001-create",
    // One row per (owner, metric, resolution, bucket, part). Every resolution is written at
    // flush time, so a statistics read touches at most a few hundred rows per metric.
    sql: `CREATE TABLE usage_rollups (
      owner TEXT NOT NULL,
      metric TEXT NOT NULL,
      res INTEGER NOT NULL,
      bucket INTEGER NOT NULL,
      part INTEGER NOT NULL,
      value REAL NOT NULL,
      at_ms INTEGER NOT NULL,
      PRIMARY KEY (owner, metric, res, bucket, part)
    ) WITHOUT ROWID`,
  },
];
