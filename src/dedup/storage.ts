/** A key a publishing write may take: the message that takes it, and until when. */
export interface DedupClaim {
  accountId: string;
  key: string;
  messageId: string;
  expiresAt: number;
}

/** Deduplication keys as every engine keeps them; everything runs inside a publishing write. */
export interface DedupStorage {
  /** The original message id while the key's window is open; `candidate` is the message that would take the key. */
  find(accountId: string, key: string, nowMs: number, candidate?: string): string | undefined;
  remember(accountId: string, key: string, messageId: string, expiresAt: number): void;
  prune(nowMs: number): number;
  deleteAccount(accountId: string): void;
}
