import { existsSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { isPostgresUrl } from "../engines/postgres/connect.ts";

/** What SQLite writes beside a database file. */
const COMPANIONS = ["", "-wal", "-shm", "-journal"];

/**
 * What a start is about to create on disk for a SQLite database that does not exist yet (the file,
 * the files SQLite writes beside it, the folders leading to it), and how to take it back: a start
 * that fails (a port in use, say) leaves nothing behind. A database that existed, a PostgreSQL URL
 * and `--memory` are left alone.
 */
export function undoForFailedStart(dbPath: string | null): () => void {
  if (dbPath === null || isPostgresUrl(dbPath)) return () => {};
  const file = resolve(dbPath);
  if (existsSync(file)) return () => {};
  const newFolders: string[] = [];
  for (let folder = dirname(file); !existsSync(folder) && dirname(folder) !== folder; folder = dirname(folder)) newFolders.push(folder);
  return () => {
    for (const suffix of COMPANIONS) rmSync(file + suffix, { force: true });
    // Deepest first, and only while empty: whatever else appeared there meanwhile stays.
    for (const folder of newFolders) {
      if (!existsSync(folder) || readdirSync(folder).length > 0) break;
      rmdirSync(folder);
    }
  };
}
