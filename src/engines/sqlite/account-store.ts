import type { Database } from "bun:sqlite";
import type { AccountRow, AccountStorage } from "../../accounts/storage.ts";

/** Accounts on SQLite. */
export class SqliteAccountStore implements AccountStorage {
  private readonly selectAll;
  private readonly upsertRow;
  private readonly updateKeys;

  constructor(db: Database) {
    this.selectAll = db.prepare<AccountRow, []>("SELECT * FROM accounts");
    this.upsertRow = db.prepare(
      `INSERT INTO accounts (id, email, api_key, token, plan, current_signing_key, next_signing_key, configured_keys)
       VALUES ($id, $email, $api_key, $token, $plan, $current_signing_key, $next_signing_key, $configured_keys)
       ON CONFLICT (id) DO UPDATE SET email = excluded.email, api_key = excluded.api_key, token = excluded.token,
         plan = excluded.plan, current_signing_key = excluded.current_signing_key,
         next_signing_key = excluded.next_signing_key, configured_keys = excluded.configured_keys`,
    );
    this.updateKeys = db.prepare(
      "UPDATE accounts SET current_signing_key = ?, next_signing_key = ? WHERE id = ?",
    );
  }

  all(): AccountRow[] {
    return this.selectAll.all();
  }
  upsert(row: AccountRow): void {
    this.upsertRow.run(row);
  }
  setKeys(id: string, current: string, next: string): void {
    this.updateKeys.run(current, next, id);
  }
}
