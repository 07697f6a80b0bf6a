import type { Database } from "bun:sqlite";
import type { FaultRuleRow, FaultRuleStorage } from "../../faults/storage.ts";

/** Fault rules on SQLite. */
export class SqliteFaultRuleStore implements FaultRuleStorage {
  constructor(private readonly db: Database) {}

  all(): FaultRuleRow[] {
    return this.db.query<FaultRuleRow, []>("SELECT * FROM fault_rules").all();
  }
  insert(row: Omit<FaultRuleRow, "seq">): void {
    this.db
      .query("INSERT INTO fault_rules (id, account_id, created_at, definition) VALUES (?, ?, ?, ?)")
      .run(row.id, row.account_id, row.created_at, row.definition);
  }
  delete(accountId: string, id: string): boolean {
    return this.db.query("DELETE FROM fault_rules WHERE account_id = ? AND id = ?").run(accountId, id).changes > 0;
  }
  deleteAccount(accountId: string): number {
    return this.db.query("DELETE FROM fault_rules WHERE account_id = ?").run(accountId).changes;
  }
}
