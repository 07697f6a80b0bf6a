import type { IndexRowBase, IndexStorage } from "../../management/shared/storage.ts";
import type { UsageFixtureLedgerStorage } from "../../management/vector/storage.ts";
import type { CachedTable } from "./cached-table.ts";

/** Search and vector indexes of the management API, kept in memory on every node. */
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
  upsert(row: Row): void {
    this.table.put({ ...row });
  }
  rename(accountId: string, id: string, name: string): boolean {
    const row = this.table.get(id);
    if (row && row.account_id === accountId) this.table.put({ ...row, name });
    return row !== undefined && row.account_id === accountId;
  }
  setTokens(accountId: string, id: string, token: string, readOnlyToken: string): boolean {
    const row = this.table.get(id);
    if (row && row.account_id === accountId) this.table.put({ ...row, token, read_only_token: readOnlyToken });
    return row !== undefined && row.account_id === accountId;
  }
  delete(accountId: string, id: string): boolean {
    return this.get(accountId, id) !== null && this.table.remove(id);
  }
}

export interface LedgerRow {
  key: string;
  applied_at: number;
}

/** Usage fixtures already applied to vector indexes (each once), kept in memory on every node. */
export class PgUsageLedger implements UsageFixtureLedgerStorage {
  constructor(readonly table: CachedTable<LedgerRow & Record<string, unknown>>) {}
  seen(key: string): boolean {
    return this.table.get(key) !== undefined;
  }
  mark(key: string, nowMs: number): void {
    if (!this.seen(key)) this.table.put({ key, applied_at: nowMs });
  }
}
