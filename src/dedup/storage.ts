import type { WriteTx } from "../store/transactor.ts";

/** A key a publishing write may take: the message that takes it, and until when. */
export interface DedupClaim {
  accountId: string;
  key: string;
  messageId: string;
  expiresAt: number;
}

/** Deduplication keys as every engine keeps them; everything runs inside a publishing write (`tx`). */
export interface DedupStorage {
  /** The original message id while the key's window is open; `candidate` is the message that would take the key. */
  find(tx: WriteTx, accountId: string, key: string, nowMs: number, candidate?: string): Promise<string | undefined>;
  remember(tx: WriteTx, accountId: string, key: string, messageId: string, expiresAt: number): Promise<void>;
  prune(tx: WriteTx, nowMs: number): Promise<number>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;
}
