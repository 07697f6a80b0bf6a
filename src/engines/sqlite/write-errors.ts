import { isStorageUnavailable, type StorageFailure } from "../../store/errors.ts";

/** A statement SQLite refused (a constraint, a trigger): the write is not stored, as on PostgreSQL. */
export class SqliteRefusal extends Error implements StorageFailure {
  readonly storageUnavailable = true;
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** A write's error: SQLite's refusal of one of its statements as a storage failure (503), anything else as it is. */
export function refusal(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_") || isStorageUnavailable(error)) return error;
  return new SqliteRefusal(String((error as Error).message), code);
}

/** Thrown into a write that awaited something other than its stores: the tick would have let other I/O in. */
export class WriteAwaitedIoError extends Error {
  constructor() {
    super("a write awaited something other than its stores (a timer, a request): SQLite keeps its transaction on one turn");
  }
}
