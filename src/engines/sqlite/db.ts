import { Database, constants } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Migration } from "../../store/migration.ts";

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
  if (path) keepWalFiles(db);
  return db;
}

/**
 * A WAL that has grown in a burst shrinks back to this size when the writer starts it over. Above
 * the size at which the checkpointer starts it over under load (`recyclePages` in wal.ts: 32 MB of
 * 4 KB pages) with room for what commits add meanwhile: a WAL started over keeps its file, and
 * commits write over its pages instead of extending it.
 */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/**
 * Keeps the `-wal` and `-shm` files across a clean close (SQLite deletes them by default). Opening
 * a WAL database needs its 32 KB `-shm` file: creating it on a full disk fails, so after a default
 * clean stop svcd could not start until space returned, while with the files kept it starts,
 * reads, and answers writes with 503. The last connection still checkpoints everything at its
 * close, and with a size limit set it truncates the WAL to zero bytes: the database file alone
 * holds all data. Set on every connection, since whichever closes last decides.
 */
export function keepWalFiles(db: Database): void {
  db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
  db.run(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT}`);
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
