import type { Write } from "../../store/transactor.ts";
import { lostLockConflict } from "./pipeline.ts";

/** A write waiting for its tick (again, after a lost lock conflict), and its caller's promise. */
export interface PendingWrite {
  write: Write<unknown>;
  /** Times it lost a lock conflict and went back to wait for a later tick. */
  conflicts: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Times a write runs again after a lock conflict (`lostLockConflict`) before its caller gets the 503. */
const LOCK_CONFLICT_RETRIES = 5;

export const mayRunAgain = (item: PendingWrite, error: unknown) =>
  lostLockConflict(error) && item.conflicts < LOCK_CONFLICT_RETRIES;
