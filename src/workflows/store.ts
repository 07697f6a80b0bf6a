import type { Database } from "bun:sqlite";
import { joinLabels, splitLabels } from "../model/labels.ts";
import { HeaderPairs } from "../model/columns.ts";
import { jsonColumn } from "../store/json-column.ts";
import type { Filter } from "../filters/filter.ts";
import { applyFilter } from "../filters/sql.ts";
import { Where } from "../store/where.ts";
import { ErrorHeadersJson, RunDataJson, StepDetailsJson } from "./columns.ts";
import type { CallType, RunRecord, RunState, StepDeliveryState, StepDetails, StepEntry, StepError } from "./model.ts";

interface RunRow {
  seq: number;
  account_id: string;
  run_id: string;
  url: string;
  created_at: number;
  state: string;
  completed_at: number | null;
  label: string | null;
  caller_ip: string | null;
  flow_key: string | null;
  dlq_id: string | null;
  result: string | null;
  data: string;
  unsettled: number;
}

type RunData = Pick<RunRecord, "config" | "invoker" | "failureFunction" | "awaitingSdk">;

const readRunData = jsonColumn("workflow_runs.data", RunDataJson);
const readHeaders = jsonColumn("workflow_steps.headers", HeaderPairs);
const readDetails = jsonColumn("workflow_steps.details", StepDetailsJson);
const readErrorHeaders = jsonColumn("workflow_step_errors.headers", ErrorHeadersJson);

function toRun(r: RunRow): RunRecord {
  const data: RunData = readRunData(r.data);
  return {
    accountId: r.account_id,
    runId: r.run_id,
    seq: r.seq,
    url: r.url,
    createdAt: r.created_at,
    state: r.state as RunState,
    completedAt: r.completed_at ?? undefined,
    labels: splitLabels(r.label),
    callerIp: r.caller_ip ?? undefined,
    dlqId: r.dlq_id ?? undefined,
    result: r.result ?? undefined,
    unsettled: r.unsettled === 1 || undefined,
    ...data,
  };
}

function runParams(run: RunRecord) {
  const data: RunData = {
    config: run.config,
    invoker: run.invoker,
    failureFunction: run.failureFunction,
    awaitingSdk: run.awaitingSdk || undefined,
  };
  return {
    account_id: run.accountId,
    run_id: run.runId,
    url: run.url,
    created_at: run.createdAt,
    state: run.state,
    completed_at: run.completedAt ?? null,
    label: joinLabels(run.labels),
    caller_ip: run.callerIp ?? null,
    flow_key: run.config.flow?.key ?? null,
    dlq_id: run.dlqId ?? null,
    result: run.result ?? null,
    data: JSON.stringify(data),
    unsettled: run.unsettled ? 1 : 0,
    invoker_run_id: run.invoker?.workflowRunId ?? null,
  };
}

interface StepRow {
  account_id: string;
  run_id: string;
  position: number;
  message_id: string;
  call_type: string;
  url: string;
  method: string;
  body: Uint8Array;
  created_at: number;
  headers: string;
  retries: number;
  retry_delay: string | null;
  state: string;
  next_delivery_at: number | null;
  details: string | null;
}

/** Where a run keeps what the filters look at (`time`: its creation). */
const RUN_FILTER_COLUMNS = { time: "created_at", workflowRunId: "run_id", workflowCreatedAt: "created_at", state: "state" };

function toStep(r: StepRow): StepEntry {
  return {
    accountId: r.account_id,
    runId: r.run_id,
    position: r.position,
    messageId: r.message_id,
    callType: r.call_type as CallType,
    url: r.url,
    method: r.method,
    body: r.body,
    createdAt: r.created_at,
    headers: readHeaders(r.headers),
    retries: r.retries,
    retryDelayExpr: r.retry_delay ?? undefined,
    state: r.state as StepDeliveryState,
    nextDeliveryAt: r.next_delivery_at ?? undefined,
    details: r.details ? readDetails(r.details) : undefined,
  };
}

interface ErrorRow {
  message_id: string;
  time: number;
  status: number;
  error: string;
  body: string;
  headers: string;
}

/**
 * Filters of run listings (logs) and bulk cancel: the shared filters a run has (OR within one,
 * AND across them), `fromDate`/`toDate` bounding its creation time; `urls` are prefixes with
 * `urlPrefix`, and `messageIds` find the runs those messages belong to.
 */
export interface RunFilter
  extends Pick<Filter, "urls" | "hosts" | "paths" | "labels" | "callerIps" | "flowControlKeys" | "fromDate" | "toDate" | "workflowRunIds" | "workflowCreatedAts" | "messageIds"> {
  states?: RunState[];
  urlPrefix?: boolean;
}

/** Runs and their step lists: one row per run, one per step entry. */
export class RunStore {
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

  insertRun(run: RunRecord): void {
    this.insertRunStmt.run(runParams(run));
  }

  /** Writes every field of a run back (runs are small; one statement for every change). */
  saveRun(run: RunRecord): void {
    this.updateRunStmt.run(runParams(run));
  }

  getRun(accountId: string, runId: string): RunRecord | undefined {
    const row = this.getRunStmt.get(accountId, runId);
    return row ? toRun(row) : undefined;
  }

  /** Appends an entry at the end of the run's list (its message not delivered yet, unless given); returns its position. */
  appendStep(entry: Omit<StepEntry, "position" | "state"> & { state?: StepDeliveryState }): number {
    const position = this.nextPositionStmt.get(entry.accountId, entry.runId)!.n;
    this.insertStepStmt.run({
      account_id: entry.accountId,
      run_id: entry.runId,
      position,
      message_id: entry.messageId,
      call_type: entry.callType,
      url: entry.url,
      method: entry.method,
      body: entry.body,
      created_at: entry.createdAt,
      headers: JSON.stringify(entry.headers),
      retries: entry.retries,
      retry_delay: entry.retryDelayExpr ?? null,
      state: entry.state ?? "PENDING",
      details: entry.details ? JSON.stringify(entry.details) : null,
    });
    return position;
  }

  /** How the delivery of a message of the run stands now. */
  setDelivery(accountId: string, runId: string, messageId: string, state: StepDeliveryState, nextDeliveryAt?: number): void {
    this.deliveryStmt.run(state, nextDeliveryAt ?? null, accountId, runId, messageId);
  }

  /** What the run's log needs of an entry, learnt after its publish. */
  setDetails(accountId: string, runId: string, messageId: string, details: StepDetails): void {
    this.detailsStmt.run(JSON.stringify(details), accountId, runId, messageId);
  }

  /** A failed attempt of one of the run's messages (a step, a call, its failure function). */
  addError(accountId: string, runId: string, messageId: string, e: StepError): void {
    this.insertErrorStmt.run(accountId, runId, messageId, e.time, e.status, e.error, e.body, JSON.stringify(e.headers));
  }

  /** The failed attempts of the run's messages, oldest first, by message id. */
  errors(accountId: string, runId: string): Map<string, StepError[]> {
    const byMessage = new Map<string, StepError[]>();
    for (const r of this.errorsStmt.all(accountId, runId)) {
      const list = byMessage.get(r.message_id) ?? [];
      list.push({ error: r.error, body: r.body, headers: readErrorHeaders(r.headers), status: r.status, time: r.time });
      byMessage.set(r.message_id, list);
    }
    return byMessage;
  }

  /** The runs this run started with `context.invoke`, oldest first. */
  invokedBy(accountId: string, runId: string): RunRecord[] {
    return this.invokedStmt.all(accountId, runId).map(toRun);
  }

  steps(accountId: string, runId: string): StepEntry[] {
    return this.stepsStmt.all(accountId, runId).map(toStep);
  }

  /** The run's list up to and including `position`. */
  prefix(accountId: string, runId: string, position: number): StepEntry[] {
    return this.prefixStmt.all(accountId, runId, position).map(toStep);
  }

  /** The run's entry of a message (a resumed run's list repeats the ids of the run it resumes). */
  stepOfMessage(accountId: string, runId: string, messageId: string): StepEntry | undefined {
    const row = this.stepByMessageStmt.get(messageId, accountId, runId);
    return row ? toStep(row) : undefined;
  }

  /** Points an entry at another message (the SDK's re-trigger of a run started without it). */
  retagStep(entry: Pick<StepEntry, "accountId" | "runId" | "position" | "messageId" | "headers" | "retries" | "retryDelayExpr">): void {
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
  unsettledRuns(limit: number): RunRecord[] {
    return this.db.query<RunRow, [number]>("SELECT * FROM workflow_runs WHERE unsettled = 1 LIMIT ?").all(limit).map(toRun);
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  listRuns(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number): RunRecord[] {
    const prefixes = f.urlPrefix ? f.urls : undefined;
    const where = applyFilter(new Where("account_id", accountId), { ...f, urls: prefixes ? undefined : f.urls, messageIds: undefined }, RUN_FILTER_COLUMNS);
    where.add("seq", "<", beforeSeq ?? undefined);
    if (prefixes?.length) where.raw(`(${prefixes.map((p) => `substr(url, 1, length(${where.bind(p)})) = ${where.bind(p)}`).join(" OR ")})`);
    if (f.messageIds?.length) {
      const ids = f.messageIds.map((id) => where.bind(id));
      where.raw(`run_id IN (SELECT run_id FROM workflow_steps WHERE account_id = ${where.bind(accountId)} AND message_id IN (${ids.join(", ")}))`);
    }
    const { sql, params } = where.select("workflow_runs", "seq DESC", limit);
    return this.db.query<RunRow, Record<string, string | number>>(sql).all(params).map(toRun);
  }

  /**
   * Runs that ended before `beforeMs` leave with their steps (plan log retention), a bounded batch
   * per call; returns how many left.
   */
  prune(accountId: string, beforeMs: number, batch = 500): number {
    const old = this.db
      .query<{ run_id: string }, [string, number, number]>(
        "SELECT run_id FROM workflow_runs WHERE account_id = ? AND completed_at IS NOT NULL AND completed_at < ? LIMIT ?",
      )
      .all(accountId, beforeMs, batch);
    for (const { run_id } of old) this.deleteRun(accountId, run_id);
    return old.length;
  }

  deleteRun(accountId: string, runId: string): void {
    this.db.query("DELETE FROM workflow_step_errors WHERE account_id = ? AND run_id = ?").run(accountId, runId);
    this.db.query("DELETE FROM workflow_steps WHERE account_id = ? AND run_id = ?").run(accountId, runId);
    this.db.query("DELETE FROM workflow_runs WHERE account_id = ? AND run_id = ?").run(accountId, runId);
  }

  deleteAccount(accountId: string): void {
    this.db.query("DELETE FROM workflow_step_errors WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM workflow_steps WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM workflow_runs WHERE account_id = ?").run(accountId);
  }
}

