import type { Database } from "bun:sqlite";

export type IndexRowBase = {
  id: string;
  account_id: string;
  name: string;
  token: string;
  read_only_token: string;
  creation_time: number;
};

/** Prepared statements over one index table; search and vector indexes differ only in columns. */
export class IndexStore<Row extends IndexRowBase> {
  private readonly selectByAccount;
  private readonly selectOne;
  private readonly selectById;
  private readonly selectByName;
  private readonly upsertRow;
  private readonly updateName;
  private readonly updateTokens;
  private readonly deleteRow;

  constructor(db: Database, table: string, columns: ReadonlyArray<keyof Row & string>) {
    this.selectByAccount = db.prepare<Row, [string]>(
      `SELECT * FROM ${table} WHERE account_id = ? ORDER BY creation_time, rowid`,
    );
    this.selectOne = db.prepare<Row, [string, string]>(`SELECT * FROM ${table} WHERE account_id = ? AND id = ?`);
    this.selectById = db.prepare<Row, [string]>(`SELECT * FROM ${table} WHERE id = ?`);
    this.selectByName = db.prepare<{ id: string }, [string, string]>(
      `SELECT id FROM ${table} WHERE account_id = ? AND name = ?`,
    );
    this.upsertRow = db.prepare(
      `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => "$" + c).join(", ")})
       ON CONFLICT (id) DO UPDATE SET ${columns.filter((c) => c !== "id").map((c) => `${c} = excluded.${c}`).join(", ")}`,
    );
    this.updateName = db.prepare(`UPDATE ${table} SET name = ? WHERE account_id = ? AND id = ?`);
    this.updateTokens = db.prepare(`UPDATE ${table} SET token = ?, read_only_token = ? WHERE account_id = ? AND id = ?`);
    this.deleteRow = db.prepare(`DELETE FROM ${table} WHERE account_id = ? AND id = ?`);
  }

  list(accountId: string): Row[] {
    return this.selectByAccount.all(accountId);
  }
  get(accountId: string, id: string): Row | null {
    return this.selectOne.get(accountId, id);
  }
  /** Any account's row: fixtures keep what an earlier start generated (tokens, creation time). */
  byId(id: string): Row | null {
    return this.selectById.get(id);
  }
  idByName(accountId: string, name: string): string | null {
    return this.selectByName.get(accountId, name)?.id ?? null;
  }
  upsert(row: Row): void {
    this.upsertRow.run(row);
  }
  rename(accountId: string, id: string, name: string): boolean {
    return this.updateName.run(name, accountId, id).changes > 0;
  }
  setTokens(accountId: string, id: string, token: string, readOnlyToken: string): boolean {
    return this.updateTokens.run(token, readOnlyToken, accountId, id).changes > 0;
  }
  delete(accountId: string, id: string): boolean {
    return this.deleteRow.run(accountId, id).changes > 0;
  }
}

/** What the domain uses of an index store (every engine provides it). */
export type IndexStorage<Row extends IndexRowBase> = Pick<IndexStore<Row>, keyof IndexStore<Row>>;
