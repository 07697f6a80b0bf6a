import type { Database } from "bun:sqlite";
import {
  accountRotation,
  accountUpsert,
  addToWindow,
  type AccountRow,
  type AccountStorage,
  type RequestCountStorage,
} from "../../accounts/storage.ts";
import { sqlitePlaceholder, type SqlValue } from "../../store/patch.ts";

/** Accounts on SQLite. */
export class SqliteAccountStore implements AccountStorage {
  private readonly selectAll;

  constructor(private readonly db: Database) {
    this.selectAll = db.prepare<AccountRow, []>("SELECT * FROM accounts");
  }

  all(): AccountRow[] {
    return this.selectAll.all();
  }
  upsert(row: AccountRow): AccountRow {
    const { text, params } = accountUpsert(row, sqlitePlaceholder);
    return this.db.query<AccountRow, SqlValue[]>(text).get(...params)!;
  }
  rotateKeys(id: string, next: string): AccountRow | undefined {
    const { text, params } = accountRotation(id, next, sqlitePlaceholder);
    return this.db.query<AccountRow, SqlValue[]>(text).get(...params) ?? undefined;
  }
}

/**
 * The plan's request counts on SQLite: one process holds them all. A second's requests are
 * counted in memory (nothing to keep past the second); a day's messages in the table, with the
 * writes that store them.
 */
export class SqliteRequestCounts implements RequestCountStorage {
  private readonly seconds = new Map<string, { second: number; count: number }>();

  constructor(private readonly db: Database) {}

  countRequest(accountId: string, second: number): number {
    let window = this.seconds.get(accountId);
    if (!window || window.second !== second) this.seconds.set(accountId, (window = { second, count: 0 }));
    return ++window.count;
  }
  addMessages(accountId: string, day: number, n: number): number {
    const { text, params } = addToWindow(accountId, "messages", day, n, sqlitePlaceholder);
    return this.db.query<{ count: number }, SqlValue[]>(text).get(...params)!.count - n;
  }
}
