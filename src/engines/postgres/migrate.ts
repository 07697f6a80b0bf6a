import type { SQL } from "bun";
import type { PostgresMigration } from "./ddl.ts";

/** Any constant: every node asks PostgreSQL for the same advisory lock while it migrates. */
const MIGRATION_LOCK = 0x5c_d0_16;

/**
 * Applies the migrations this database has not seen, all in one transaction under an advisory
 * lock: nodes starting together migrate once, the others wait and then find nothing to do.
 */
export async function migratePostgres(sql: SQL, migrations: readonly PostgresMigration[]): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`;
    const seen = new Set((await tx`SELECT id FROM schema_migrations`).map((r: { id: string }) => r.id));
    const applied: string[] = [];
    for (const m of migrations) {
      if (seen.has(m.id)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (id, applied_at) VALUES (${m.id}, ${Date.now()})`;
      applied.push(m.id);
    }
    return applied;
  });
}
