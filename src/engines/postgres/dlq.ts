import type { SQL } from "bun";
import { DLQ_FILTER_COLUMNS, dlqRowOf, toEntry, type DlqRow, type DlqStorage } from "../../dlq/storage.ts";
import type { DlqEntry } from "../../dlq/model.ts";
import type { FailureCallbackState } from "../../model/message.ts";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { Where } from "../../store/where.ts";
import type { PgRow } from "./pipeline.ts";
import { sqlOf } from "./tick.ts";
import { bytes, bytesOrNull, num, numOrNull, positional, rowOf, type RowCodec, runShared, str, strOrNull } from "./values.ts";

const DLQ_COLUMNS: RowCodec<DlqRow> = {
  seq: num,
  dlq_id: str,
  failed_at: num,
  message: str,
  body: bytes,
  response_status: numOrNull,
  response_headers: strOrNull,
  response_body: bytesOrNull,
  error: strOrNull,
  workflow_created_at: numOrNull,
  failure_function_state: strOrNull,
};

const entryOf = (r: PgRow): DlqEntry => toEntry(rowOf(r, DLQ_COLUMNS));

/**
 * The DLQ on PostgreSQL: inside a write, plain statements in the tick's transaction (entries a
 * write reads are locked: it deletes or updates them next). Ids never collide across nodes (each
 * node's sequence carries its own prefix, see cluster ids), so `exists` need not look.
 */
export class PgDlqStore implements DlqStorage {
  constructor(private readonly sql: SQL) {}

  async insert(tx: WriteTx, entry: Omit<DlqEntry, "seq">): Promise<void> {
    sqlOf(tx).insert("dlq", dlqRowOf(entry));
  }

  async get(tx: WriteTx, accountId: string, dlqId: string): Promise<DlqEntry | undefined> {
    const text = "SELECT * FROM dlq WHERE dlq_id = $1 AND account_id = $2 FOR UPDATE";
    const [row] = await sqlOf(tx).query(text, [dlqId, accountId]);
    return row ? entryOf(row) : undefined;
  }

  async delete(tx: WriteTx, accountId: string, dlqId: string): Promise<boolean> {
    const text = "DELETE FROM dlq WHERE dlq_id = $1 AND account_id = $2 RETURNING seq";
    return (await sqlOf(tx).query(text, [dlqId, accountId])).length > 0;
  }

  async setFailureFunctionState(
    tx: WriteTx,
    accountId: string,
    dlqId: string,
    state: FailureCallbackState,
  ): Promise<void> {
    const text = "UPDATE dlq SET failure_function_state = $1 WHERE dlq_id = $2 AND account_id = $3";
    sqlOf(tx).queue(text, [state, dlqId, accountId]);
  }

  async exists(_tx: WriteTx, _dlqId: string): Promise<boolean> {
    return false;
  }

  async oldest(tx: WriteTx, accountId: string, f: Filter, afterSeq: number | null, limit: number): Promise<DlqEntry[]> {
    const { sql, params } = this.where(accountId, f).add("seq", ">", afterSeq ?? undefined).select("dlq", "seq", limit);
    const q = positional(`${sql} FOR UPDATE`, params);
    return (await sqlOf(tx).query(q.text, q.params)).map(entryOf);
  }

  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    sqlOf(tx).queue("DELETE FROM dlq WHERE account_id = $1", [accountId]);
  }

  async read(accountId: string, dlqId: string): Promise<DlqEntry | undefined> {
    const [row] = await this.sql`SELECT * FROM dlq WHERE dlq_id = ${dlqId} AND account_id = ${accountId}`;
    return row ? entryOf(row) : undefined;
  }

  async count(accountId: string): Promise<number> {
    const [row] = await this.sql`SELECT count(*) AS n FROM dlq WHERE account_id = ${accountId}`;
    return num(row.n);
  }

  async newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<DlqEntry[]> {
    const where = this.where(accountId, f).add("seq", "<", beforeSeq ?? undefined);
    const { sql, params } = where.select("dlq", "seq DESC", limit);
    return (await runShared<PgRow>(this.sql, sql, params)).map(entryOf);
  }

  async readOldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): Promise<DlqEntry[]> {
    const { sql, params } = this.where(accountId, f).add("seq", ">", afterSeq ?? undefined).select("dlq", "seq", limit);
    return (await runShared<PgRow>(this.sql, sql, params)).map(entryOf);
  }

  async prune(accountId: string, beforeMs: number): Promise<number> {
    const rows = await this.sql`DELETE FROM dlq WHERE account_id = ${accountId} AND failed_at < ${beforeMs} RETURNING seq`;
    return rows.length;
  }

  private where(accountId: string, f: Filter): Where {
    return applyFilter(new Where("account_id", accountId), f, DLQ_FILTER_COLUMNS);
  }
}
