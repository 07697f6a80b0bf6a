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
 * storage. `all` is read outside writes (committed rules only); the rest runs inside writes.
 */
export interface FaultRuleStorage {
  /** Every rule, oldest first. */
  all(): FaultRuleRow[];
  insert(row: Omit<FaultRuleRow, "seq">): void;
  delete(accountId: string, id: string): boolean;
  /** Returns how many the account had. */
  deleteAccount(accountId: string): number;
}

/** The order rules are tried in: the order they were created. */
export const byCreation = (a: FaultRuleRow, b: FaultRuleRow) => a.seq - b.seq;
