/** SQLite result codes (and their extended forms) that mean "storage unavailable", not a bug. */
const STORAGE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|NOMEM|PROTOCOL)(_|$)/;

/** True for a locked, full or unreadable database: worth retrying later, never a reason to give up. */
export function isStorageUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && STORAGE_UNAVAILABLE.test(code);
}
