import { HttpError } from "../core/errors.ts";

/** SQLite result codes (and their extended forms) that mean "storage unavailable", not a bug. */
const STORAGE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|NOMEM|PROTOCOL)(_|$)/;

/**
 * An engine's error that says the write could not be stored (the transaction is lost: connection,
 * lock timeout, deadlock), as opposed to a bug in the write. PostgreSQL's writer errors carry it.
 */
export interface StorageFailure {
  readonly storageUnavailable: true;
}

/** True for a locked, full or unreadable database, or a lost transaction: worth retrying later, never a reason to give up. */
export function isStorageUnavailable(error: unknown): boolean {
  if ((error as Partial<StorageFailure> | null)?.storageUnavailable === true) return true;
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && STORAGE_UNAVAILABLE.test(code);
}

/**
 * A write the storage refused: its transaction failed (the group commit's 503), or the engine said
 * it is unavailable. Worth writing again shortly, unlike a bug in the write.
 */
export function refusedByStorage(error: unknown): boolean {
  return (error instanceof HttpError && error.status === 503) || isStorageUnavailable(error);
}
