import type { FaultRuleRow, FaultRuleStorage } from "../../faults/storage.ts";
import type { CachedTable } from "./cached-table.ts";

/** Fault rules, kept in memory on every node (reloaded when another node changes them). */
export class PgFaultRuleStore implements FaultRuleStorage {
  constructor(readonly table: CachedTable<FaultRuleRow & Record<string, unknown>>) {}

  all(): FaultRuleRow[] {
    return this.table.all();
  }
  insert(row: Omit<FaultRuleRow, "seq">): void {
    const text = "INSERT INTO fault_rules (id, account_id, created_at, definition) VALUES ($1, $2, $3, $4) RETURNING *";
    this.table.returning(text, [row.id, row.account_id, row.created_at, row.definition]);
  }
  delete(accountId: string, id: string): boolean {
    const text = "DELETE FROM fault_rules WHERE account_id = $1 AND id = $2 RETURNING *";
    return this.table.deleting(text, [accountId, id], (r) => r.id === id) > 0;
  }
  deleteAccount(accountId: string): number {
    const text = "DELETE FROM fault_rules WHERE account_id = $1 RETURNING *";
    return this.table.deleting(text, [accountId], (r) => r.account_id === accountId);
  }
}
