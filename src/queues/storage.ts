import { given, updateOnly, upsertOnly, type Placeholder, type SqlStatement } from "../store/patch.ts";
import type { WriteTx } from "../store/transactor.ts";

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

/** Queues as every engine keeps them; `list` and `lag` are read outside writes, `get` and `count` both ways. */
export interface QueueStorage {
  get(tx: WriteTx | null, accountId: string, name: string): Promise<QueueRow | undefined>;
  /**
   * The queue as stored, which no other write can delete or change until `tx` ends (PostgreSQL
   * locks its row; SQLite's writes run one at a time): a message parked in it is then in a queue
   * that exists, whichever write on whichever node deletes the queue at the same moment.
   */
  hold(tx: WriteTx, accountId: string, name: string): Promise<QueueRow | undefined>;
  list(accountId: string): Promise<QueueRow[]>;
  count(tx: WriteTx | null, accountId: string): Promise<number>;
  /**
   * Creates the queue (`change` over `created`) or changes only the fields `change` gives of the
   * one stored, whatever another node changed meanwhile; returns the queue as stored now.
   */
  upsert(
    tx: WriteTx,
    accountId: string,
    name: string,
    change: QueueChange,
    created: Required<QueueChange>,
    nowMs: number,
  ): Promise<QueueRow>;
  /** Changes only the fields `change` gives of the stored queue; undefined when none is stored. */
  update(
    tx: WriteTx,
    accountId: string,
    name: string,
    change: QueueChange,
    nowMs: number,
  ): Promise<QueueRow | undefined>;
  delete(tx: WriteTx, accountId: string, name: string): Promise<boolean>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;
  /** A new message of the queue must wait (parked): others wait already, or the queue is at its parallelism. */
  mustWait(tx: WriteTx, accountId: string, name: string, parallelism: number, nowMs: number): Promise<boolean>;
  /**
   * Lets the queue's oldest waiting messages go while fewer than `parallelism` have started and not
   * finished (a delayed one still waits for its own time); returns how many went (engines that
   * promote after the write may answer an estimate).
   */
  promote(tx: WriteTx, accountId: string, name: string, parallelism: number, nowMs: number): Promise<number>;
  /** Messages of the queue not yet delivered, failed or cancelled. */
  lag(accountId: string, name: string): Promise<number>;
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
