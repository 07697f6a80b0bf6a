import { given, updateOnly, upsertOnly, type Placeholder, type SqlStatement } from "../store/patch.ts";

export interface QueueRow {
  account_id: string;
  name: string;
  created_at: number;
  updated_at: number;
  parallelism: number;
  paused: number;
}

/** What a request changes of a queue: the fields it gives (others keep their stored value). */
export interface QueueChange {
  parallelism?: number;
  paused?: boolean;
}

/** Queues as every engine keeps them; `lag` is read outside writes, the rest inside. */
export interface QueueStorage {
  get(accountId: string, name: string): QueueRow | undefined;
  list(accountId: string): QueueRow[];
  count(accountId: string): number;
  /**
   * Creates the queue (`change` over `created`) or changes only the fields `change` gives of the
   * one stored, whatever another node changed meanwhile; returns the queue as stored now.
   */
  upsert(accountId: string, name: string, change: QueueChange, created: Required<QueueChange>, nowMs: number): QueueRow;
  /** Changes only the fields `change` gives of the stored queue; undefined when none is stored. */
  update(accountId: string, name: string, change: QueueChange, nowMs: number): QueueRow | undefined;
  delete(accountId: string, name: string): boolean;
  deleteAccount(accountId: string): void;
  /** A new message of the queue must wait (parked): others wait already, or the queue is at its parallelism. */
  mustWait(accountId: string, name: string, parallelism: number, nowMs: number): boolean;
  /**
   * Lets the queue's oldest waiting messages go while fewer than `parallelism` have started and not
   * finished (a delayed one still waits for its own time); returns how many went (engines that
   * promote after the write may answer an estimate).
   */
  promote(accountId: string, name: string, parallelism: number, nowMs: number): number;
  /** Messages of the queue not yet delivered, failed or cancelled. */
  lag(accountId: string, name: string): number | Promise<number>;
}

/** What `change` sets of a stored queue: the fields it gives, and the time of the change when it gives any. */
function changedColumns(change: QueueChange, nowMs: number): Partial<QueueRow> {
  const set = given({ parallelism: change.parallelism, paused: change.paused === undefined ? undefined : change.paused ? 1 : 0 });
  return Object.keys(set).length > 0 ? { ...set, updated_at: nowMs } : set;
}

/** `QueueStorage.upsert` in SQL, the same on every engine. */
export function queueUpsert(
  accountId: string,
  name: string,
  change: QueueChange,
  created: Required<QueueChange>,
  nowMs: number,
  p: Placeholder,
): SqlStatement {
  const paused = (change.paused ?? created.paused) ? 1 : 0;
  const row = { created_at: nowMs, updated_at: nowMs, parallelism: change.parallelism ?? created.parallelism, paused };
  return upsertOnly("queues", { account_id: accountId, name }, row, changedColumns(change, nowMs), p);
}

/** `QueueStorage.update` in SQL; null when `change` gives nothing. */
export function queueUpdate(accountId: string, name: string, change: QueueChange, nowMs: number, p: Placeholder) {
  return updateOnly("queues", { account_id: accountId, name }, changedColumns(change, nowMs), p);
}
