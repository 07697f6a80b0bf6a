import type { Database } from "bun:sqlite";
import { DLQ_FILTER_COLUMNS, dlqRowOf, toEntry, type DlqRow, type DlqStorage } from "../../dlq/storage.ts";
import type { DlqEntry } from "../../dlq/model.ts";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { FailureCallbackState } from "../../model/message.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { Where } from "../../store/where.ts";

/** The DLQ on SQLite. */
export class SqliteDlqStore implements DlqStorage {
  private readonly insertStmt;
  private readonly getStmt;
  private readonly deleteStmt;
  private readonly countStmt;
  private readonly existsStmt;
  private readonly failureStateStmt;

  constructor(private readonly db: Database) {
    this.insertStmt = db.prepare(
      `INSERT INTO dlq (dlq_id, account_id, message_id, failed_at, url, topic_name, queue_name, schedule_id, label, flow_key, caller_ip, response_status, message, body, response_headers, response_body, error, workflow_run_id, workflow_created_at, failure_function_state)
       VALUES ($dlq_id, $account_id, $message_id, $failed_at, $url, $topic_name, $queue_name, $schedule_id, $label, $flow_key, $caller_ip, $response_status, $message, $body, $response_headers, $response_body, $error, $workflow_run_id, $workflow_created_at, $failure_function_state)`,
    );
    this.failureStateStmt = db.prepare("UPDATE dlq SET failure_function_state = ? WHERE dlq_id = ? AND account_id = ?");
    this.getStmt = db.prepare<DlqRow, [string, string]>("SELECT * FROM dlq WHERE dlq_id = ? AND account_id = ?");
    this.deleteStmt = db.prepare("DELETE FROM dlq WHERE dlq_id = ? AND account_id = ?");
    this.existsStmt = db.prepare<{ one: number }, [string]>("SELECT 1 AS one FROM dlq WHERE dlq_id = ?");
    this.countStmt = db.prepare<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM dlq WHERE account_id = ?");
  }

  async insert(_tx: WriteTx, entry: Omit<DlqEntry, "seq">): Promise<void> {
    this.insertStmt.run(dlqRowOf(entry));
  }

  async get(_tx: WriteTx, accountId: string, dlqId: string): Promise<DlqEntry | undefined> {
    return this.getNow(accountId, dlqId);
  }

  async read(accountId: string, dlqId: string): Promise<DlqEntry | undefined> {
    return this.getNow(accountId, dlqId);
  }

  private getNow(accountId: string, dlqId: string): DlqEntry | undefined {
    const row = this.getStmt.get(dlqId, accountId);
    return row ? toEntry(row) : undefined;
  }

  async delete(_tx: WriteTx, accountId: string, dlqId: string): Promise<boolean> {
    return this.deleteStmt.run(dlqId, accountId).changes > 0;
  }

  async setFailureFunctionState(
    _tx: WriteTx,
    accountId: string,
    dlqId: string,
    state: FailureCallbackState,
  ): Promise<void> {
    this.failureStateStmt.run(state, dlqId, accountId);
  }

  async exists(_tx: WriteTx, dlqId: string): Promise<boolean> {
    return this.existsStmt.get(dlqId) !== null;
  }

  async count(accountId: string): Promise<number> {
    return this.countStmt.get(accountId)?.n ?? 0;
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. Rows are read as they are taken. */
  async newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Iterable<DlqEntry>> {
    return this.newestRows(accountId, f, beforeSeq, limit);
  }

  private *newestRows(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Generator<DlqEntry> {
    const { sql, params } = this.where(accountId, f).add("seq", "<", beforeSeq ?? undefined).select("dlq", "seq DESC", limit);
    for (const row of this.db.query<DlqRow, Record<string, string | number>>(sql).iterate(params)) yield toEntry(row);
  }

  /** Oldest first, after `afterSeq`: the order bulk operations act in. */
  async oldest(
    _tx: WriteTx,
    accountId: string,
    f: Filter,
    afterSeq: number | null,
    limit: number,
  ): Promise<DlqEntry[]> {
    return this.oldestNow(accountId, f, afterSeq, limit);
  }

  async readOldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): Promise<DlqEntry[]> {
    return this.oldestNow(accountId, f, afterSeq, limit);
  }

  private oldestNow(accountId: string, f: Filter, afterSeq: number | null, limit: number): DlqEntry[] {
    return this.select(this.where(accountId, f).add("seq", ">", afterSeq ?? undefined), "seq", limit);
  }

  private where(accountId: string, f: Filter): Where {
    return applyFilter(new Where("account_id", accountId), f, DLQ_FILTER_COLUMNS);
  }

  private select(where: Where, order: string, limit: number): DlqEntry[] {
    const { sql, params } = where.select("dlq", order, limit);
    return this.db.query<DlqRow, Record<string, string | number>>(sql).all(params).map(toEntry);
  }

  /** Drops entries that failed before `beforeMs` (plan retention), for one account. */
  async prune(accountId: string, beforeMs: number): Promise<number> {
    return this.db.query("DELETE FROM dlq WHERE account_id = ? AND failed_at < ?").run(accountId, beforeMs).changes;
  }

  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.db.query("DELETE FROM dlq WHERE account_id = ?").run(accountId);
  }
}
