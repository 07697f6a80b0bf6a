import type { SQL } from "bun";
import {
  accountRotation,
  accountUpsert,
  addToWindow,
  type AccountRow,
  type AccountStorage,
  type RequestCountStorage,
} from "../../accounts/storage.ts";
import { postgresPlaceholder } from "../../store/patch.ts";
import type { WriteTx } from "../../store/transactor.ts";
import type { CachedTable } from "./cached-table.ts";
import { sqlOf } from "./tick.ts";
import { num } from "./values.ts";

/** Accounts, kept in memory on every node. */
export class PgAccountStore implements AccountStorage {
  constructor(readonly table: CachedTable<AccountRow & Record<string, unknown>>) {}
  async all(): Promise<AccountRow[]> {
    return this.table.all(null);
  }
  async upsert(tx: WriteTx, row: AccountRow): Promise<AccountRow> {
    const { text, params } = accountUpsert(row, postgresPlaceholder);
    return (await this.table.returning(tx, text, params))[0]!;
  }
  async rotateKeys(tx: WriteTx, id: string, next: string): Promise<AccountRow | undefined> {
    const { text, params } = accountRotation(id, next, postgresPlaceholder);
    return (await this.table.returning(tx, text, params))[0];
  }
}

/** The plan's request counts on PostgreSQL: one row per account and limit, counted by every node. */
export class PgRequestCounts implements RequestCountStorage {
  constructor(private readonly sql: SQL) {}

  /** A statement of its own (no tick): the second's count must not wait for a commit. */
  async countRequest(accountId: string, second: number): Promise<number> {
    const { text, params } = addToWindow(accountId, "requests", second, 1, postgresPlaceholder);
    const [row] = await this.sql.unsafe(text, params);
    return num(row.count);
  }
  async addMessages(tx: WriteTx, accountId: string, day: number, n: number): Promise<number> {
    const { text, params } = addToWindow(accountId, "messages", day, n, postgresPlaceholder);
    return num((await sqlOf(tx).query(text, params))[0]!.count) - n;
  }
}
