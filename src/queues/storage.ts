export interface QueueRow {
  account_id: string;
  name: string;
  created_at: number;
  updated_at: number;
  parallelism: number;
  paused: number;
}

/** Queues as every engine keeps them; `lag` is read outside writes, the rest inside. */
export interface QueueStorage {
  get(accountId: string, name: string): QueueRow | undefined;
  list(accountId: string): QueueRow[];
  count(accountId: string): number;
  insert(accountId: string, name: string, parallelism: number, paused: boolean, nowMs: number): void;
  update(accountId: string, name: string, parallelism: number, paused: boolean, nowMs: number): void;
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
