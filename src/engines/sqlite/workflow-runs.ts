import type { Database } from "bun:sqlite";
import type { WriteTx } from "../../store/transactor.ts";
import type { RunRecord, StepDeliveryState, StepDetails, StepEntry, StepError } from "../../workflows/model.ts";
import {
  errorsByMessage,
  runListQuery,
  runRowOf,
  stepRowOf,
  toRun,
  toStep,
  type ErrorRow,
  type RunRow,
  type StepRow,
} from "../../workflows/run-rows.ts";
import type { NewStep, RetaggedStep, RunFilter, RunStorage } from "../../workflows/storage.ts";

/** Runs and their step lists on SQLite: one row per run, one per step entry. */
export class SqliteRunStore implements RunStorage {
  private readonly insertRunStmt;
  private readonly updateRunStmt;
  private readonly getRunStmt;
  private readonly insertStepStmt;
  private readonly nextPositionStmt;
  private readonly stepsStmt;
  private readonly prefixStmt;
  private readonly stepByMessageStmt;
  private readonly retagStepStmt;
  private readonly deliveryStmt;
  private readonly detailsStmt;
  private readonly insertErrorStmt;
  private readonly errorsStmt;
  private readonly invokedStmt;

  constructor(private readonly db: Database) {
    const runColumns = "account_id, run_id, url, created_at, state, completed_at, label, caller_ip, flow_key, dlq_id, result, data, unsettled, invoker_run_id";
    this.insertRunStmt = db.prepare(
      `INSERT INTO workflow_runs (${runColumns}) VALUES (${runColumns.split(", ").map((c) => "$" + c).join(", ")})`,
    );
    this.updateRunStmt = db.prepare(
      `UPDATE workflow_runs SET url = $url, created_at = $created_at, state = $state, completed_at = $completed_at, label = $label,
       caller_ip = $caller_ip, flow_key = $flow_key, dlq_id = $dlq_id, result = $result, data = $data, unsettled = $unsettled,
       invoker_run_id = $invoker_run_id
       WHERE account_id = $account_id AND run_id = $run_id`,
    );
    this.getRunStmt = db.prepare<RunRow, [string, string]>("SELECT * FROM workflow_runs WHERE account_id = ? AND run_id = ?");
    const stepColumns = "account_id, run_id, position, message_id, call_type, url, method, body, created_at, headers, retries, retry_delay, state, details";
    this.insertStepStmt = db.prepare(
      `INSERT INTO workflow_steps (${stepColumns}) VALUES (${stepColumns.split(", ").map((c) => "$" + c).join(", ")})`,
    );
    this.nextPositionStmt = db.prepare<{ n: number }, [string, string]>(
      "SELECT COALESCE(MAX(position) + 1, 0) AS n FROM workflow_steps WHERE account_id = ? AND run_id = ?",
    );
    this.stepsStmt = db.prepare<StepRow, [string, string]>(
      "SELECT * FROM workflow_steps WHERE account_id = ? AND run_id = ? ORDER BY position",
    );
    this.prefixStmt = db.prepare<StepRow, [string, string, number]>(
      "SELECT * FROM workflow_steps WHERE account_id = ? AND run_id = ? AND position <= ? ORDER BY position",
    );
    this.stepByMessageStmt = db.prepare<StepRow, [string, string, string]>(
      "SELECT * FROM workflow_steps WHERE message_id = ? AND account_id = ? AND run_id = ?",
    );
    this.retagStepStmt = db.prepare(
      "UPDATE workflow_steps SET message_id = ?, headers = ?, retries = ?, retry_delay = ?, state = 'PENDING', next_delivery_at = NULL WHERE account_id = ? AND run_id = ? AND position = ?",
    );
    this.deliveryStmt = db.prepare(
      "UPDATE workflow_steps SET state = ?, next_delivery_at = ? WHERE account_id = ? AND run_id = ? AND message_id = ?",
    );
    this.detailsStmt = db.prepare("UPDATE workflow_steps SET details = ? WHERE account_id = ? AND run_id = ? AND message_id = ?");
    this.insertErrorStmt = db.prepare(
      "INSERT INTO workflow_step_errors (account_id, run_id, message_id, time, status, error, body, headers) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.errorsStmt = db.prepare<ErrorRow, [string, string]>(
      "SELECT message_id, time, status, error, body, headers FROM workflow_step_errors WHERE account_id = ? AND run_id = ? ORDER BY id",
    );
    this.invokedStmt = db.prepare<RunRow, [string, string]>("SELECT * FROM workflow_runs WHERE account_id = ? AND invoker_run_id = ? ORDER BY seq");
  }

  async insertRun(_tx: WriteTx, run: RunRecord): Promise<void> {
    this.insertRunStmt.run(runRowOf(run));
  }

  /** Writes every field of a run back (runs are small; one statement for every change). */
  async saveRun(_tx: WriteTx, run: RunRecord): Promise<void> {
    this.updateRunStmt.run(runRowOf(run));
  }

  async getRun(_tx: WriteTx, accountId: string, runId: string): Promise<RunRecord | undefined> {
    return this.findRun(accountId, runId);
  }

  private findRun(accountId: string, runId: string): RunRecord | undefined {
    const row = this.getRunStmt.get(accountId, runId);
    return row ? toRun(row) : undefined;
  }

  /** Appends an entry at the end of the run's list (its message not delivered yet, unless given); returns its position. */
  async appendStep(_tx: WriteTx, entry: NewStep): Promise<number> {
    const position = this.nextPositionStmt.get(entry.accountId, entry.runId)!.n;
    const { next_delivery_at: _, ...row } = stepRowOf({ ...entry, position, state: entry.state ?? "PENDING" });
    this.insertStepStmt.run(row);
    return position;
  }

  async firstStep(_tx: WriteTx, accountId: string, runId: string): Promise<StepEntry | undefined> {
    return this.prefix(accountId, runId, 0)[0];
  }

  /** How the delivery of a message of the run stands now. */
  async setDelivery(
    _tx: WriteTx,
    accountId: string,
    runId: string,
    messageId: string,
    state: StepDeliveryState,
    nextDeliveryAt?: number,
  ): Promise<void> {
    this.deliveryStmt.run(state, nextDeliveryAt ?? null, accountId, runId, messageId);
  }

  /** What the run's log needs of an entry, learnt after its publish. */
  async setDetails(_tx: WriteTx, accountId: string, runId: string, messageId: string, details: StepDetails) {
    this.detailsStmt.run(JSON.stringify(details), accountId, runId, messageId);
  }

  /** A failed attempt of one of the run's messages (a step, a call, its failure function). */
  async addError(_tx: WriteTx, accountId: string, runId: string, messageId: string, e: StepError): Promise<void> {
    this.insertErrorStmt.run(accountId, runId, messageId, e.time, e.status, e.error, e.body, JSON.stringify(e.headers));
  }

  /** The failed attempts of the run's messages, oldest first, by message id. */
  async errors(accountId: string, runId: string): Promise<Map<string, StepError[]>> {
    return errorsByMessage(this.errorsStmt.all(accountId, runId));
  }

  /** The runs this run started with `context.invoke`, oldest first. */
  async invokedBy(accountId: string, runId: string): Promise<RunRecord[]> {
    return this.invokedStmt.all(accountId, runId).map(toRun);
  }

  async steps(_tx: WriteTx, accountId: string, runId: string): Promise<StepEntry[]> {
    return this.allSteps(accountId, runId);
  }

  private allSteps(accountId: string, runId: string): StepEntry[] {
    return this.stepsStmt.all(accountId, runId).map(toStep);
  }

  /** The run's list up to and including `position`. */
  private prefix(accountId: string, runId: string, position: number): StepEntry[] {
    return this.prefixStmt.all(accountId, runId, position).map(toStep);
  }

  async readRun(accountId: string, runId: string): Promise<RunRecord | undefined> {
    return this.findRun(accountId, runId);
  }

  async readSteps(accountId: string, runId: string, upTo?: number): Promise<StepEntry[]> {
    return upTo === undefined ? this.allSteps(accountId, runId) : this.prefix(accountId, runId, upTo);
  }

  async readStepOfMessage(accountId: string, runId: string, messageId: string): Promise<StepEntry | undefined> {
    return this.stepOf(accountId, runId, messageId);
  }

  /** The run's entry of a message (a resumed run's list repeats the ids of the run it resumes). */
  async stepOfMessage(_tx: WriteTx, accountId: string, runId: string, messageId: string) {
    return this.stepOf(accountId, runId, messageId);
  }

  private stepOf(accountId: string, runId: string, messageId: string): StepEntry | undefined {
    const row = this.stepByMessageStmt.get(messageId, accountId, runId);
    return row ? toStep(row) : undefined;
  }

  /** Points an entry at another message (the SDK's re-trigger of a run started without it). */
  async retagStep(_tx: WriteTx, entry: RetaggedStep): Promise<void> {
    this.retagStepStmt.run(
      entry.messageId,
      JSON.stringify(entry.headers),
      entry.retries,
      entry.retryDelayExpr ?? null,
      entry.accountId,
      entry.runId,
      entry.position,
    );
  }

  /** Runs that ended but still have to settle (see `unsettled`). */
  async unsettledRuns(limit: number): Promise<RunRecord[]> {
    return this.db.query<RunRow, [number]>("SELECT * FROM workflow_runs WHERE unsettled = 1 LIMIT ?").all(limit).map(toRun);
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  async listRuns(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number): Promise<RunRecord[]> {
    const { sql, params } = runListQuery(accountId, f, beforeSeq, limit);
    return this.db.query<RunRow, Record<string, string | number>>(sql).all(params).map(toRun);
  }

  /**
   * Runs that ended before `beforeMs` leave with their steps (plan log retention), a bounded batch
   * per call; returns how many left.
   */
  async prune(accountId: string, beforeMs: number, batch = 500): Promise<number> {
    const old = this.db
      .query<{ run_id: string }, [string, number, number]>(
        "SELECT run_id FROM workflow_runs WHERE account_id = ? AND completed_at IS NOT NULL AND completed_at < ? LIMIT ?",
      )
      .all(accountId, beforeMs, batch);
    for (const { run_id } of old) this.dropRun(accountId, run_id);
    return old.length;
  }

  async deleteRun(_tx: WriteTx, accountId: string, runId: string): Promise<void> {
    this.dropRun(accountId, runId);
  }

  private dropRun(accountId: string, runId: string): void {
    this.db.query("DELETE FROM workflow_step_errors WHERE account_id = ? AND run_id = ?").run(accountId, runId);
    this.db.query("DELETE FROM workflow_steps WHERE account_id = ? AND run_id = ?").run(accountId, runId);
    this.db.query("DELETE FROM workflow_runs WHERE account_id = ? AND run_id = ?").run(accountId, runId);
  }

  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.db.query("DELETE FROM workflow_step_errors WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM workflow_steps WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM workflow_runs WHERE account_id = ?").run(accountId);
  }
}
