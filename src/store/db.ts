import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

export interface Migration {
  /** Namespaced and ordered within its domain, e.g. `messages/001-create`. */
  id: string;
  sql: string;
}

/**
 * Opens the database in WAL mode with synchronous=NORMAL: a commit survives a crash of svcd
 * itself; on power loss the last few commits may roll back, the file never corrupts.
 */
export function openDatabase(path: string | null, busyTimeoutMs = 5000): Database {
  if (path) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path ?? ":memory:", { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  db.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  db.run("PRAGMA foreign_keys = ON");
  db.run("PRAGMA temp_store = MEMORY");
  db.run("PRAGMA cache_size = -32000");
  return db;
}

/** Applies, in order and each in its own transaction, the migrations this database has not seen. */
export function migrate(db: Database, migrations: readonly Migration[]): string[] {
  db.run(
    "CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
  );
  const seen = new Set(
    db.query<{ id: string }, []>("SELECT id FROM schema_migrations").all().map((r) => r.id),
  );
  const applied: string[] = [];
  const record = db.prepare("INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)");
  for (const m of migrations) {
    if (seen.has(m.id)) continue;
    db.transaction(() => {
      db.run(m.sql);
      record.run(m.id, Date.now());
    })();
    applied.push(m.id);
  }
  return applied;
}
