import type { IndexRowBase, IndexStorage } from "../../management/shared/storage.ts";
import type { UsageFixtureLedgerStorage } from "../../management/vector/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";
import type { CachedTable } from "./cached-table.ts";
import { sqlOf } from "./tick.ts";

/**
 * Search and vector indexes of the management API, kept in memory on every node. A rename or a
 * token reset changes only those columns in PostgreSQL.
 */
export class PgIndexStore<Row extends IndexRowBase> implements IndexStorage<Row> {
  constructor(readonly table: CachedTable<Row & Record<string, unknown>>) {}
  async list(accountId: string): Promise<Row[]> {
    return this.table.where(null, (r) => r.account_id === accountId).sort((a, b) => a.creation_time - b.creation_time);
  }
  async get(tx: WriteTx | null, accountId: string, id: string): Promise<Row | null> {
    return this.ofAccount(tx, accountId, id);
  }
  async byId(tx: WriteTx, id: string): Promise<Row | null> {
    return this.table.get(tx, id) ?? null;
  }
  async idByName(tx: WriteTx | null, accountId: string, name: string): Promise<string | null> {
    return this.table.where(tx, (r) => r.account_id === accountId && r.name === name)[0]?.id ?? null;
  }
  /** A new index, or a config file's fixture: the row as given. */
  async upsert(tx: WriteTx, row: Row): Promise<void> {
    const columns = Object.keys(row);
    const updates = columns.filter((c) => c !== "id").map((c) => `${c} = excluded.${c}`);
    const text = `INSERT INTO ${this.table.table} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})
      ON CONFLICT (id) DO UPDATE SET ${updates.join(", ")} RETURNING *`;
    await this.table.returning(tx, text, columns.map((c) => (row as Record<string, unknown>)[c] ?? null));
  }
  async rename(tx: WriteTx, accountId: string, id: string, name: string): Promise<boolean> {
    const text = `UPDATE ${this.table.table} SET name = $1 WHERE id = $2 AND account_id = $3 RETURNING *`;
    return this.found(tx, accountId, id, (await this.table.returning(tx, text, [name, id, accountId])).length > 0);
  }
  async setTokens(tx: WriteTx, accountId: string, id: string, token: string, readOnlyToken: string): Promise<boolean> {
    const text = `UPDATE ${this.table.table} SET token = $1, read_only_token = $2 WHERE id = $3 AND account_id = $4 RETURNING *`;
    const changed = (await this.table.returning(tx, text, [token, readOnlyToken, id, accountId])).length > 0;
    return this.found(tx, accountId, id, changed);
  }
  async delete(tx: WriteTx, accountId: string, id: string): Promise<boolean> {
    const text = `DELETE FROM ${this.table.table} WHERE id = $1 AND account_id = $2 RETURNING *`;
    return (await this.table.deleting(tx, text, [id, accountId], (r) => r.id === id && r.account_id === accountId)) > 0;
  }
  private ofAccount(tx: WriteTx | null, accountId: string, id: string): Row | null {
    const row = this.table.get(tx, id);
    return row && row.account_id === accountId ? row : null;
  }
  /** A row another node deleted meanwhile goes from the copy here too. */
  private found(tx: WriteTx, accountId: string, id: string, found: boolean): boolean {
    if (!found && this.ofAccount(tx, accountId, id)) this.table.recordDeleted(tx, id);
    return found;
  }
}

export interface LedgerRow {
  key: string;
  applied_at: number;
}

/** Usage fixtures already applied to vector indexes (each once), kept in memory on every node. */
export class PgUsageLedger implements UsageFixtureLedgerStorage {
  constructor(readonly table: CachedTable<LedgerRow & Record<string, unknown>>) {}
  async seen(tx: WriteTx, key: string): Promise<boolean> {
    return this.table.get(tx, key) !== undefined;
  }
  async mark(tx: WriteTx, key: string, nowMs: number): Promise<void> {
    if (this.table.get(tx, key) !== undefined) return;
    const row = { key, applied_at: nowMs };
    sqlOf(tx).insert("vector_usage_fixtures", row, "ON CONFLICT DO NOTHING");
    this.table.record(tx, row);
  }
}
