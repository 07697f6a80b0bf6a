import type { Database } from "bun:sqlite";
import type { FaultRuleRow, FaultRuleStorage } from "../../faults/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";

/** Fault rules on SQLite. */
export class SqliteFaultRuleStore implements FaultRuleStorage {
  constructor(private readonly db: Database) {}

  async all(_tx: WriteTx | null): Promise<FaultRuleRow[]> {
    return this.db.query<FaultRuleRow, []>("SELECT * FROM fault_rules").all();
  }
  async insert(_tx: WriteTx, row: Omit<FaultRuleRow, "seq">): Promise<void> {
    this.db
      .query("INSERT INTO fault_rules (id, account_id, created_at, definition) VALUES (?, ?, ?, ?)")
      .run(row.id, row.account_id, row.created_at, row.definition);
  }
  async delete(_tx: WriteTx, accountId: string, id: string): Promise<boolean> {
    return this.db.query("DELETE FROM fault_rules WHERE account_id = ? AND id = ?").run(accountId, id).changes > 0;
  }
  async deleteAccount(_tx: WriteTx, accountId: string): Promise<number> {
    return this.db.query("DELETE FROM fault_rules WHERE account_id = ?").run(accountId).changes;
  }
}
