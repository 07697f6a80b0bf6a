import type { SQL } from "bun";
import type { WriteTx } from "../../store/transactor.ts";
import type { RunRecord, StepDeliveryState, StepDetails, StepEntry, StepError } from "../../workflows/model.ts";
import { errorsByMessage, runListQuery, runRowOf, stepRowOf, toRun } from "../../workflows/run-rows.ts";
import type { NewStep, RetaggedStep, RunFilter, RunStorage } from "../../workflows/storage.ts";
import { sqlOf } from "./tick.ts";
import { num, runShared } from "./values.ts";
import { errorRowOfPg, runRowOfPg, stepOfPg } from "./workflow-rows.ts";

type Raw = Record<string, unknown>;

const SAVE_RUN = `UPDATE workflow_runs SET url = $3, created_at = $4, state = $5, completed_at = $6, label = $7,
  caller_ip = $8, flow_key = $9, dlq_id = $10, result = $11, data = $12, unsettled = $13, invoker_run_id = $14
  WHERE account_id = $1 AND run_id = $2`;
const GET_RUN = "SELECT * FROM workflow_runs WHERE account_id = $1 AND run_id = $2 FOR UPDATE";
const LOCK_RUN = "SELECT 1 FROM workflow_runs WHERE account_id = $1 AND run_id = $2 FOR UPDATE";
const NEXT_POSITION = `SELECT COALESCE(MAX(position) + 1, 0) AS n FROM workflow_steps
  WHERE account_id = $1 AND run_id = $2`;
const FIRST_STEP = "SELECT * FROM workflow_steps WHERE account_id = $1 AND run_id = $2 AND position = 0";
const STEPS = "SELECT * FROM workflow_steps WHERE account_id = $1 AND run_id = $2 ORDER BY position";
const STEP_OF_MESSAGE = `SELECT * FROM workflow_steps WHERE message_id = $1 AND account_id = $2 AND run_id = $3
  ORDER BY position LIMIT 1`;
const RETAG_STEP = `UPDATE workflow_steps SET message_id = $1, headers = $2, retries = $3, retry_delay = $4,
  state = 'PENDING', next_delivery_at = NULL WHERE account_id = $5 AND run_id = $6 AND position = $7`;
const SET_DELIVERY = `UPDATE workflow_steps SET state = $1, next_delivery_at = $2
  WHERE account_id = $3 AND run_id = $4 AND message_id = $5`;
const SET_DETAILS = "UPDATE workflow_steps SET details = $1 WHERE account_id = $2 AND run_id = $3 AND message_id = $4";
const DELETE_RUN = `WITH e AS (DELETE FROM workflow_step_errors WHERE account_id = $1 AND run_id = $2),
  s AS (DELETE FROM workflow_steps WHERE account_id = $1 AND run_id = $2)
  DELETE FROM workflow_runs WHERE account_id = $1 AND run_id = $2`;
const DELETE_ACCOUNT = `WITH e AS (DELETE FROM workflow_step_errors WHERE account_id = $1),
  s AS (DELETE FROM workflow_steps WHERE account_id = $1)
  DELETE FROM workflow_runs WHERE account_id = $1`;
/** One statement (never a transaction of several on the pool: see `prune`). */
const PRUNE = `WITH old AS (
    SELECT run_id FROM workflow_runs WHERE account_id = $1 AND completed_at IS NOT NULL AND completed_at < $2
    LIMIT $3 FOR UPDATE SKIP LOCKED),
  e AS (DELETE FROM workflow_step_errors WHERE account_id = $1 AND run_id IN (SELECT run_id FROM old)),
  s AS (DELETE FROM workflow_steps WHERE account_id = $1 AND run_id IN (SELECT run_id FROM old)),
  r AS (DELETE FROM workflow_runs WHERE account_id = $1 AND run_id IN (SELECT run_id FROM old) RETURNING 1)
  SELECT count(*) AS n FROM r`;

/**
 * Runs and their step lists on PostgreSQL. Writes are SQL in the tick's transaction (the
 * SqliteRunStore's statements); a run read inside a write is locked (`getRun`, `appendStep`): the write
 * goes on to change it, and another node's write on the same run waits for this tick's commit.
 * Reads outside writes use the pool.
 */
export class PgRunStore implements RunStorage {
  constructor(private readonly sql: SQL) {}

  async insertRun(tx: WriteTx, run: RunRecord): Promise<void> {
    sqlOf(tx).insert("workflow_runs", runRowOf(run));
  }

  async saveRun(tx: WriteTx, run: RunRecord): Promise<void> {
    const r = runRowOf(run);
    sqlOf(tx).queue(SAVE_RUN, [
      r.account_id,
      r.run_id,
      r.url,
      r.created_at,
      r.state,
      r.completed_at,
      r.label,
      r.caller_ip,
      r.flow_key,
      r.dlq_id,
      r.result,
      r.data,
      r.unsettled,
      r.invoker_run_id,
    ]);
  }

  async getRun(tx: WriteTx, accountId: string, runId: string): Promise<RunRecord | undefined> {
    const [row] = await sqlOf(tx).query(GET_RUN, [accountId, runId]);
    return row ? toRun(runRowOfPg(row)) : undefined;
  }

  async appendStep(tx: WriteTx, entry: NewStep): Promise<number> {
    const sql = sqlOf(tx);
    // The run is locked first, in a statement of its own: the end of its list is then read in a
    // statement that sees what a write of another node that held the lock committed.
    sql.queue(LOCK_RUN, [entry.accountId, entry.runId]);
    const [end] = await sql.query(NEXT_POSITION, [entry.accountId, entry.runId]);
    const position = num(end?.n ?? 0);
    // As on SQLite, a new entry has no next delivery time.
    const { next_delivery_at: _, ...row } = stepRowOf({ ...entry, position, state: entry.state ?? "PENDING" });
    sql.insert("workflow_steps", row);
    return position;
  }

  async firstStep(tx: WriteTx, accountId: string, runId: string): Promise<StepEntry | undefined> {
    const [row] = await sqlOf(tx).query(FIRST_STEP, [accountId, runId]);
    return row ? stepOfPg(row) : undefined;
  }

  async steps(tx: WriteTx, accountId: string, runId: string): Promise<StepEntry[]> {
    return (await sqlOf(tx).query(STEPS, [accountId, runId])).map(stepOfPg);
  }

  async stepOfMessage(tx: WriteTx, accountId: string, runId: string, messageId: string) {
    const [row] = await sqlOf(tx).query(STEP_OF_MESSAGE, [messageId, accountId, runId]);
    return row ? stepOfPg(row) : undefined;
  }

  async retagStep(tx: WriteTx, e: RetaggedStep): Promise<void> {
    const { accountId, runId, position, messageId, headers, retries, retryDelayExpr } = e;
    const params = [messageId, JSON.stringify(headers), retries, retryDelayExpr ?? null, accountId, runId, position];
    sqlOf(tx).queue(RETAG_STEP, params);
  }

  async setDelivery(
    tx: WriteTx,
    accountId: string,
    runId: string,
    messageId: string,
    state: StepDeliveryState,
    nextDeliveryAt?: number,
  ): Promise<void> {
    sqlOf(tx).queue(SET_DELIVERY, [state, nextDeliveryAt ?? null, accountId, runId, messageId]);
  }

  async setDetails(tx: WriteTx, accountId: string, runId: string, messageId: string, details: StepDetails) {
    sqlOf(tx).queue(SET_DETAILS, [JSON.stringify(details), accountId, runId, messageId]);
  }

  async addError(tx: WriteTx, accountId: string, runId: string, messageId: string, e: StepError): Promise<void> {
    sqlOf(tx).insert("workflow_step_errors", {
      account_id: accountId,
      run_id: runId,
      message_id: messageId,
      time: e.time,
      status: e.status,
      error: e.error,
      body: e.body,
      headers: JSON.stringify(e.headers),
    });
  }

  async deleteRun(tx: WriteTx, accountId: string, runId: string): Promise<void> {
    sqlOf(tx).queue(DELETE_RUN, [accountId, runId]);
  }

  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    sqlOf(tx).queue(DELETE_ACCOUNT, [accountId]);
  }

  async readRun(accountId: string, runId: string): Promise<RunRecord | undefined> {
    const [row] = await this.sql`SELECT * FROM workflow_runs WHERE account_id = ${accountId} AND run_id = ${runId}`;
    return row ? toRun(runRowOfPg(row)) : undefined;
  }

  async readSteps(accountId: string, runId: string, upTo?: number): Promise<StepEntry[]> {
    const rows = await this.sql`
      SELECT * FROM workflow_steps
      WHERE account_id = ${accountId} AND run_id = ${runId}
        AND (${upTo ?? null}::int IS NULL OR position <= ${upTo ?? null})
      ORDER BY position`;
    return rows.map(stepOfPg);
  }

  async readStepOfMessage(accountId: string, runId: string, messageId: string): Promise<StepEntry | undefined> {
    const [row] = await this.sql`
      SELECT * FROM workflow_steps WHERE message_id = ${messageId} AND account_id = ${accountId} AND run_id = ${runId}
      ORDER BY position LIMIT 1`;
    return row ? stepOfPg(row) : undefined;
  }

  async listRuns(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number): Promise<RunRecord[]> {
    const { sql, params } = runListQuery(accountId, f, beforeSeq, limit);
    return (await runShared<Raw>(this.sql, sql, params)).map((r) => toRun(runRowOfPg(r)));
  }

  async unsettledRuns(limit: number): Promise<RunRecord[]> {
    const rows = await this.sql`SELECT * FROM workflow_runs WHERE unsettled = 1 LIMIT ${limit}`;
    return rows.map((r: Raw) => toRun(runRowOfPg(r)));
  }

  async errors(accountId: string, runId: string): Promise<Map<string, StepError[]>> {
    const rows = await this.sql`
      SELECT message_id, time, status, error, body, headers FROM workflow_step_errors
      WHERE account_id = ${accountId} AND run_id = ${runId} ORDER BY id`;
    return errorsByMessage(rows.map(errorRowOfPg));
  }

  async invokedBy(accountId: string, runId: string): Promise<RunRecord[]> {
    const rows = await this.sql`
      SELECT * FROM workflow_runs WHERE account_id = ${accountId} AND invoker_run_id = ${runId} ORDER BY seq`;
    return rows.map((r: Raw) => toRun(runRowOfPg(r)));
  }

  /**
   * Runs that ended before `beforeMs` leave with their lists and errors, a bounded batch per call
   * (the leader runs retention). One statement: a transaction of several on the pool could hold a
   * run's lock while the main thread, blocked in a write waiting for that lock, never lets it go on.
   */
  async prune(accountId: string, beforeMs: number, batch = 500): Promise<number> {
    const [row] = await this.sql.unsafe(PRUNE, [accountId, beforeMs, batch]);
    return num(row?.n ?? 0);
  }
}
