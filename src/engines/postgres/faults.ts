import type { FaultRuleRow, FaultRuleStorage } from "../../faults/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";
import type { CachedTable } from "./cached-table.ts";

/** Fault rules, kept in memory on every node (reloaded when another node changes them). */
export class PgFaultRuleStore implements FaultRuleStorage {
  constructor(readonly table: CachedTable<FaultRuleRow & Record<string, unknown>>) {}

  async all(tx: WriteTx | null): Promise<FaultRuleRow[]> {
    return this.table.all(tx);
  }
  async insert(tx: WriteTx, row: Omit<FaultRuleRow, "seq">): Promise<void> {
    const text = "INSERT INTO fault_rules (id, account_id, created_at, definition) VALUES ($1, $2, $3, $4) RETURNING *";
    await this.table.returning(tx, text, [row.id, row.account_id, row.created_at, row.definition]);
  }
  async delete(tx: WriteTx, accountId: string, id: string): Promise<boolean> {
    const text = "DELETE FROM fault_rules WHERE account_id = $1 AND id = $2 RETURNING *";
    return (await this.table.deleting(tx, text, [accountId, id], (r) => r.id === id)) > 0;
  }
  async deleteAccount(tx: WriteTx, accountId: string): Promise<number> {
    const text = "DELETE FROM fault_rules WHERE account_id = $1 RETURNING *";
    return this.table.deleting(tx, text, [accountId], (r) => r.account_id === accountId);
  }
}
