import type { Database } from "bun:sqlite";
import { accessSync, constants, mkdirSync, statfsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { StartError } from "../../core/start-error.ts";
import type { Migration } from "../../store/migration.ts";
import { migrate, openDatabase } from "./db.ts";

const WHAT_TO_DO = "choose another path with --db (or SVC_DB), or run with --memory";

/**
 * Opens (creating it if needed) and migrates the database, or fails the start with one line that
 * names the path and says what to do: a file where a folder should be, a folder that cannot be
 * written, a read-only file system, a file that is not a database, a full disk.
 */
export function openStore(path: string | null, busyTimeoutMs: number, migrations: readonly Migration[]): Database {
  if (path) checkPath(resolve(path));
  const existed = path !== null && statOrNull(resolve(path)) !== null;
  let db: Database | undefined;
  let opened = false;
  try {
    db = openDatabase(path, busyTimeoutMs);
    opened = true;
    migrate(db, migrations);
    return db;
  } catch (error) {
    db?.close();
    if (!path) throw error;
    const code = String((error as { code?: unknown })?.code);
    if (code.startsWith("SQLITE_FULL") || noSpaceLeft(dirname(resolve(path))))
      throw new StartError(`--db ${path}: no space left on the file system holding it ${spaceNeededFor(existed, opened)}; free some space and start again`);
    throw new StartError(`--db ${path}: ${sqliteFailure(error)}; ${WHAT_TO_DO}`);
  }
}

/**
 * What a start on a full disk could not do. svcd keeps the `-wal` and `-shm` files across a clean
 * stop (see keepWalFiles), so an existing database normally opens on a full disk; it cannot when
 * its `-shm` file is gone.
 */
function spaceNeededFor(existed: boolean, opened: boolean): string {
  if (!existed) return "to create the database";
  if (opened) return "to update the database to this version's schema";
  return "for the 32 KB -shm file SQLite needs beside the database (it is missing: the database was copied, or last closed by a program that removes it)";
}

function fail(path: string, reason: string): never {
  throw new StartError(`--db ${path}: ${reason}; ${WHAT_TO_DO}`);
}

/** What SQLite would report as "unable to open database file", said precisely. */
function checkPath(path: string): void {
  const folder = dirname(path);
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    fail(path, folderFailure(folder, error));
  }
  const file = statOrNull(path);
  if (file?.isDirectory()) fail(path, "is a folder, not a database file");
  // SQLite writes `<file>-wal` and `<file>-shm` next to the database: the folder must be writable.
  const folderProblem = accessProblem(folder, constants.W_OK | constants.X_OK);
  if (folderProblem) fail(path, `the folder ${folder} ${folderProblem} (svcd creates the database and its -wal and -shm files there)`);
  if (file) {
    const fileProblem = accessProblem(path, constants.R_OK | constants.W_OK);
    if (fileProblem) fail(path, `the database file ${fileProblem}`);
  }
}

function folderFailure(folder: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EEXIST" || code === "ENOTDIR") return `${firstFileOnTheWay(folder) ?? folder} is a file, not a folder`;
  if (code === "EACCES" || code === "EPERM") return `no permission to create the folder ${folder}`;
  if (code === "EROFS") return `the folder ${folder} would be on a read-only file system`;
  if (code === "ENOSPC") return `no space left to create the folder ${folder}`;
  return `cannot create the folder ${folder} (${(error as Error).message})`;
}

/** The deepest existing ancestor of `folder` that is a file (what made mkdir fail). */
function firstFileOnTheWay(folder: string): string | null {
  for (let dir = folder; ; dir = dirname(dir)) {
    const stat = statOrNull(dir);
    if (stat) return stat.isDirectory() ? null : dir;
    if (dirname(dir) === dir) return null;
  }
}

function accessProblem(path: string, mode: number): string | null {
  try {
    accessSync(path, mode);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EROFS") return "is on a read-only file system";
    if (code === "EACCES" || code === "EPERM") return "is not writable by this user";
    return `cannot be used (${(error as Error).message})`;
  }
}

/** SQLite reports a full disk at open as an I/O error (it cannot size the -shm file). */
function noSpaceLeft(folder: string): boolean {
  try {
    return statfsSync(folder).bavail === 0;
  } catch {
    return false;
  }
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function sqliteFailure(error: unknown): string {
  const code = String((error as { code?: unknown })?.code ?? "");
  const message = String((error as Error)?.message ?? error);
  if (code.startsWith("SQLITE_NOTADB")) return "is not an SQLite database (or it is damaged or encrypted)";
  if (code.startsWith("SQLITE_CORRUPT")) return "the database file is damaged";
  if (code.startsWith("SQLITE_READONLY")) return "the database is read-only (file permissions or a read-only file system)";
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
    return "the database is locked by another process (is another svcd using it?)";
  if (code.startsWith("SQLITE_CANTOPEN")) return "cannot be opened (check that the path and its folder are usable)";
  if (code.startsWith("SQLITE_IOERR")) return `an I/O error while opening it (${message})`;
  return `cannot be opened (${message})`;
}
