import type { Database } from "bun:sqlite";
import type { SearchIndexRow, SearchStore } from "../../management/search/storage.ts";
import type { IndexRowBase, IndexStorage } from "../../management/shared/storage.ts";
import type { UsageFixtureLedgerStorage, VectorIndexRow, VectorStore } from "../../management/vector/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";

/** Prepared statements over one index table; search and vector indexes differ only in columns. */
export class SqliteIndexStore<Row extends IndexRowBase> implements IndexStorage<Row> {
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

  async list(accountId: string): Promise<Row[]> {
    return this.selectByAccount.all(accountId);
  }
  async get(_tx: WriteTx | null, accountId: string, id: string): Promise<Row | null> {
    return this.selectOne.get(accountId, id);
  }
  /** Any account's row: fixtures keep what an earlier start generated (tokens, creation time). */
  async byId(_tx: WriteTx, id: string): Promise<Row | null> {
    return this.selectById.get(id);
  }
  async idByName(_tx: WriteTx | null, accountId: string, name: string): Promise<string | null> {
    return this.selectByName.get(accountId, name)?.id ?? null;
  }
  async upsert(_tx: WriteTx, row: Row): Promise<void> {
    this.upsertRow.run(row);
  }
  async rename(_tx: WriteTx, accountId: string, id: string, name: string): Promise<boolean> {
    return this.updateName.run(name, accountId, id).changes > 0;
  }
  async setTokens(_tx: WriteTx, accountId: string, id: string, token: string, readOnlyToken: string): Promise<boolean> {
    return this.updateTokens.run(token, readOnlyToken, accountId, id).changes > 0;
  }
  async delete(_tx: WriteTx, accountId: string, id: string): Promise<boolean> {
    return this.deleteRow.run(accountId, id).changes > 0;
  }
}

const SEARCH_COLUMNS = [
  "id", "account_id", "name", "endpoint", "type", "region", "partner_email", "token", "read_only_token",
  "max_vector_count", "max_monthly_reranks", "max_daily_updates", "max_daily_queries", "max_monthly_bandwidth",
  "max_writes_per_second", "max_query_per_second", "max_reads_per_request", "max_writes_per_request",
  "creation_time", "input_enrichment_enabled",
] as const satisfies ReadonlyArray<keyof SearchIndexRow>;

export const createSearchStore = (db: Database): SearchStore =>
  new SqliteIndexStore(db, "search_indexes", SEARCH_COLUMNS);

const VECTOR_COLUMNS = [
  "id", "account_id", "name", "similarity_function", "dimension_count", "endpoint", "type", "region", "token",
  "read_only_token", "max_vector_count", "max_daily_updates", "max_daily_queries", "max_monthly_bandwidth",
  "max_writes_per_second", "max_query_per_second", "max_reads_per_request", "max_writes_per_request",
  "max_total_metadata_size", "creation_time",
] as const satisfies ReadonlyArray<keyof VectorIndexRow>;

export const createVectorStore = (db: Database): VectorStore =>
  new SqliteIndexStore(db, "vector_indexes", VECTOR_COLUMNS);

/** Keys of config usage entries already recorded. */
export class SqliteUsageLedger implements UsageFixtureLedgerStorage {
  private readonly selectKey;
  private readonly insertKey;
  constructor(db: Database) {
    this.selectKey = db.prepare<{ key: string }, [string]>("SELECT key FROM vector_usage_fixtures WHERE key = ?");
    this.insertKey = db.prepare("INSERT OR IGNORE INTO vector_usage_fixtures (key, applied_at) VALUES (?, ?)");
  }
  async seen(_tx: WriteTx, key: string): Promise<boolean> {
    return this.selectKey.get(key) !== null;
  }
  async mark(_tx: WriteTx, key: string, nowMs: number): Promise<void> {
    this.insertKey.run(key, nowMs);
  }
}
