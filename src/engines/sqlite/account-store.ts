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
import type { WriteTx } from "../../store/transactor.ts";

/** Accounts on SQLite. */
export class SqliteAccountStore implements AccountStorage {
  private readonly selectAll;

  constructor(private readonly db: Database) {
    this.selectAll = db.prepare<AccountRow, []>("SELECT * FROM accounts");
  }

  async all(): Promise<AccountRow[]> {
    return this.selectAll.all();
  }
  async upsert(_tx: WriteTx, row: AccountRow): Promise<AccountRow> {
    const { text, params } = accountUpsert(row, sqlitePlaceholder);
    return this.db.query<AccountRow, SqlValue[]>(text).get(...params)!;
  }
  async rotateKeys(_tx: WriteTx, id: string, next: string): Promise<AccountRow | undefined> {
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

  async countRequest(accountId: string, second: number): Promise<number> {
    let window = this.seconds.get(accountId);
    if (!window || window.second !== second) this.seconds.set(accountId, (window = { second, count: 0 }));
    return ++window.count;
  }
  async addMessages(_tx: WriteTx, accountId: string, day: number, n: number): Promise<number> {
    const { text, params } = addToWindow(accountId, "messages", day, n, sqlitePlaceholder);
    return this.db.query<{ count: number }, SqlValue[]>(text).get(...params)!.count - n;
  }
}
