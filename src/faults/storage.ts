import type { WriteTx } from "../store/transactor.ts";

/** A fault rule as stored: its definition (the rule as given, with its seed) as JSON. */
export interface FaultRuleRow {
  seq: number;
  id: string;
  account_id: string;
  created_at: number;
  definition: string;
}

/**
 * The fault rules of every account, as every engine keeps them: shared by every node using the
 * storage. `all` is read outside writes (null: committed rules only) and inside them (with the
 * write's changes); the rest runs inside writes.
 */
export interface FaultRuleStorage {
  /** Every rule, oldest first. */
  all(tx: WriteTx | null): Promise<FaultRuleRow[]>;
  insert(tx: WriteTx, row: Omit<FaultRuleRow, "seq">): Promise<void>;
  delete(tx: WriteTx, accountId: string, id: string): Promise<boolean>;
  /** Returns how many the account had. */
  deleteAccount(tx: WriteTx, accountId: string): Promise<number>;
}

/** The order rules are tried in: the order they were created. */
export const byCreation = (a: FaultRuleRow, b: FaultRuleRow) => a.seq - b.seq;
