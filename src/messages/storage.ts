import type { Filter } from "../filters/filter.ts";
import type { MessageRecord, MessageState } from "../model/message.ts";
import type { WriteTx } from "../store/transactor.ts";

/** Live (not yet finished) messages by what they wait for. */
export interface MessageCensus {
  /** Due now, waiting for a delivery worker. */
  due: number;
  /** Due later: a delay, a not-before time or a retry backoff. */
  delayed: number;
  /** An attempt is running. */
  inFlight: number;
  /** Held behind a queue or a flow-control limit. */
  waiting: number;
}

/**
 * The live messages, as every engine keeps them. Writes and `get`/`due`/`find`/`stillClaimed`/
 * `recoverInFlight` run inside a write (`tx`); `read`, `nextDueAt` and the censuses outside one.
 */
export interface MessageStorage {
  insert(tx: WriteTx, m: MessageRecord): Promise<void>;
  /**
   * Stores a new message claimed by this process in the same write, as `insert` then `claim` would
   * leave it (ACTIVE, due nowhere), in one row write where the engine can.
   */
  insertClaimed(tx: WriteTx, m: MessageRecord): Promise<void>;
  get(tx: WriteTx, accountId: string, id: string): Promise<MessageRecord | undefined>;
  read(accountId: string, id: string): Promise<MessageRecord | undefined>;
  due(tx: WriteTx, nowMs: number, limit: number): Promise<MessageRecord[]>;
  /** Claims a message stored earlier (its row becomes ACTIVE, due nowhere). */
  claim(tx: WriteTx, id: string): Promise<void>;
  /** Claims messages `due` handed out in this write, all at once (one statement where the engine can). */
  claimDue(tx: WriteTx, ids: readonly string[]): Promise<void>;
  /** Of these messages, those whose attempt this process started is still its own (not handed back to others). */
  stillClaimed(tx: WriteTx, ids: readonly string[]): Promise<Set<string>>;
  reschedule(tx: WriteTx, id: string, state: MessageState, dispatchAt: number | null, retried: number): Promise<void>;
  setDispatch(tx: WriteTx, id: string, state: MessageState, dispatchAt: number | null): Promise<void>;
  delete(tx: WriteTx, id: string): Promise<boolean>;
  /** Outside a write: the earliest time a stored message is due (null: none is). */
  nextDueAt(): Promise<number | null>;
  recoverInFlight(tx: WriteTx, nowMs: number): Promise<number>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<string[]>;
  find(
    tx: WriteTx,
    accountId: string,
    f: Filter,
    afterSeq: number | null,
    limit: number,
  ): Promise<Array<MessageRecord & { seq: number }>>;
  /** Outside a write: how many stored messages are due, delayed, in flight or waiting. */
  census(nowMs: number): Promise<MessageCensus>;
  accountCensus(accountId: string, nowMs: number): Promise<MessageCensus>;
}
