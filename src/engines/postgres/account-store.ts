import type { AccountRow, AccountStorage } from "../../accounts/storage.ts";
import type { CachedTable } from "./cached-table.ts";

/** Accounts, kept in memory on every node. */
export class PgAccountStore implements AccountStorage {
  constructor(readonly table: CachedTable<AccountRow & Record<string, unknown>>) {}
  all(): AccountRow[] {
    return this.table.all();
  }
  upsert(row: AccountRow): void {
    this.table.put({ ...row });
  }
  setKeys(id: string, current: string, next: string): void {
    const row = this.table.get(id);
    if (row) this.table.put({ ...row, current_signing_key: current, next_signing_key: next });
  }
}
