import type { Filter } from "../filters/filter.ts";
import type { MessageRecord, MessageState } from "../model/message.ts";

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
 * The live messages, as every engine keeps them. Writes and `get`/`due`/`find`/`stillClaimed`
 * run inside a write; `read` outside one.
 */
export interface MessageStorage {
  insert(m: MessageRecord): void;
  /**
   * Stores a new message claimed by this process in the same write, as `insert` then `claim` would
   * leave it (ACTIVE, due nowhere), in one row write where the engine can.
   */
  insertClaimed(m: MessageRecord): void;
  get(accountId: string, id: string): MessageRecord | undefined;
  read(accountId: string, id: string): MessageRecord | undefined | Promise<MessageRecord | undefined>;
  due(nowMs: number, limit: number): MessageRecord[];
  /** Claims a message stored earlier (its row becomes ACTIVE, due nowhere). */
  claim(id: string): void;
  /** Claims messages `due` handed out in this write, all at once (one statement where the engine can). */
  claimDue(ids: readonly string[]): void;
  /** Of these messages, those whose attempt this process started is still its own (not handed back to others). */
  stillClaimed(ids: readonly string[]): Set<string>;
  /**
   * The next write will ask `stillClaimed` for these: an engine whose reads inside a write wait
   * for a round trip may send that read now, while the write under way commits.
   */
  checkClaimsAhead?(ids: readonly string[]): void;
  reschedule(id: string, state: MessageState, dispatchAt: number | null, retried: number): void;
  setDispatch(id: string, state: MessageState, dispatchAt: number | null): void;
  delete(id: string): boolean;
  nextDueAt(): number | null;
  recoverInFlight(nowMs: number): number;
  deleteAccount(accountId: string): string[];
  find(accountId: string, f: Filter, afterSeq: number | null, limit: number): Array<MessageRecord & { seq: number }>;
  /** Outside a write: how many stored messages are due, delayed, in flight or waiting. */
  census(nowMs: number): MessageCensus | Promise<MessageCensus>;
  accountCensus(accountId: string, nowMs: number): MessageCensus | Promise<MessageCensus>;
}
