import type { IndexRowBase, IndexStorage } from "../../management/shared/storage.ts";
import type { UsageFixtureLedgerStorage } from "../../management/vector/storage.ts";
import type { CachedTable } from "./cached-table.ts";
import type { TickScope } from "./tick.ts";

/**
 * Search and vector indexes of the management API, kept in memory on every node. A rename or a
 * token reset changes only those columns in PostgreSQL.
 */
export class PgIndexStore<Row extends IndexRowBase> implements IndexStorage<Row> {
  constructor(readonly table: CachedTable<Row & Record<string, unknown>>) {}
  list(accountId: string): Row[] {
    return this.table.where((r) => r.account_id === accountId).sort((a, b) => a.creation_time - b.creation_time);
  }
  get(accountId: string, id: string): Row | null {
    const row = this.table.get(id);
    return row && row.account_id === accountId ? row : null;
  }
  byId(id: string): Row | null {
    return this.table.get(id) ?? null;
  }
  idByName(accountId: string, name: string): string | null {
    return this.table.where((r) => r.account_id === accountId && r.name === name)[0]?.id ?? null;
  }
  /** A new index, or a config file's fixture: the row as given. */
  upsert(row: Row): void {
    const columns = Object.keys(row);
    const updates = columns.filter((c) => c !== "id").map((c) => `${c} = excluded.${c}`);
    const text = `INSERT INTO ${this.table.table} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})
      ON CONFLICT (id) DO UPDATE SET ${updates.join(", ")} RETURNING *`;
    this.table.returning(text, columns.map((c) => (row as Record<string, unknown>)[c] ?? null));
  }
  rename(accountId: string, id: string, name: string): boolean {
    const text = `UPDATE ${this.table.table} SET name = $1 WHERE id = $2 AND account_id = $3 RETURNING *`;
    return this.found(accountId, id, this.table.returning(text, [name, id, accountId]).length > 0);
  }
  setTokens(accountId: string, id: string, token: string, readOnlyToken: string): boolean {
    const text = `UPDATE ${this.table.table} SET token = $1, read_only_token = $2 WHERE id = $3 AND account_id = $4 RETURNING *`;
    return this.found(accountId, id, this.table.returning(text, [token, readOnlyToken, id, accountId]).length > 0);
  }
  delete(accountId: string, id: string): boolean {
    const text = `DELETE FROM ${this.table.table} WHERE id = $1 AND account_id = $2 RETURNING *`;
    return this.table.deleting(text, [id, accountId], (r) => r.id === id && r.account_id === accountId) > 0;
  }
  /** A row another node deleted meanwhile goes from the copy here too. */
  private found(accountId: string, id: string, found: boolean): boolean {
    if (!found && this.get(accountId, id)) this.table.recordDeleted(id);
    return found;
  }
}

export interface LedgerRow {
  key: string;
  applied_at: number;
}

/** Usage fixtures already applied to vector indexes (each once), kept in memory on every node. */
export class PgUsageLedger implements UsageFixtureLedgerStorage {
  constructor(
    private readonly scope: TickScope,
    readonly table: CachedTable<LedgerRow & Record<string, unknown>>,
  ) {}
  seen(key: string): boolean {
    return this.table.get(key) !== undefined;
  }
  mark(key: string, nowMs: number): void {
    if (this.seen(key)) return;
    const row = { key, applied_at: nowMs };
    this.scope.tx.insert("vector_usage_fixtures", row, "ON CONFLICT DO NOTHING");
    this.table.record(row);
  }
}
