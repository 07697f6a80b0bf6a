import type { Database } from "bun:sqlite";
import type { CallType, RunRecord, RunState, StepEntry } from "./model.ts";

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
}

type RunData = Pick<RunRecord, "config" | "invoker" | "failureFunction" | "awaitingSdk">;

function toRun(r: RunRow): RunRecord {
  const data = JSON.parse(r.data) as RunData;
  return {
    accountId: r.account_id,
    runId: r.run_id,
    seq: r.seq,
    url: r.url,
    createdAt: r.created_at,
    state: r.state as RunState,
    completedAt: r.completed_at ?? undefined,
    label: r.label ?? undefined,
    callerIp: r.caller_ip ?? undefined,
    dlqId: r.dlq_id ?? undefined,
    result: r.result ?? undefined,
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
    label: run.label ?? null,
    caller_ip: run.callerIp ?? null,
    flow_key: run.config.flow?.key ?? null,
    dlq_id: run.dlqId ?? null,
    result: run.result ?? null,
    data: JSON.stringify(data),
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
}

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
    headers: JSON.parse(r.headers),
    retries: r.retries,
    retryDelayExpr: r.retry_delay ?? undefined,
  };
}

/** Filters of run listings (logs) and bulk cancel; every given one must match. */
export interface RunFilter {
  runIds?: string[];
  states?: RunState[];
  /** Exact URL, or (with `urlPrefix`) every URL starting with it. */
  url?: string;
  urlPrefix?: boolean;
  labels?: string[];
  callerIp?: string;
  flowControlKey?: string;
  createdAt?: number;
  fromDate?: number;
  toDate?: number;
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

  constructor(private readonly db: Database) {
    const runColumns = "account_id, run_id, url, created_at, state, completed_at, label, caller_ip, flow_key, dlq_id, result, data";
    this.insertRunStmt = db.prepare(
      `INSERT INTO workflow_runs (${runColumns}) VALUES (${runColumns.split(", ").map((c) => "$" + c).join(", ")})`,
    );
    this.updateRunStmt = db.prepare(
      `UPDATE workflow_runs SET url = $url, created_at = $created_at, state = $state, completed_at = $completed_at, label = $label,
       caller_ip = $caller_ip, flow_key = $flow_key, dlq_id = $dlq_id, result = $result, data = $data
       WHERE account_id = $account_id AND run_id = $run_id`,
    );
    this.getRunStmt = db.prepare<RunRow, [string, string]>("SELECT * FROM workflow_runs WHERE account_id = ? AND run_id = ?");
    const stepColumns = "account_id, run_id, position, message_id, call_type, url, method, body, created_at, headers, retries, retry_delay";
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
    this.stepByMessageStmt = db.prepare<StepRow, [string]>("SELECT * FROM workflow_steps WHERE message_id = ?");
    this.retagStepStmt = db.prepare(
      "UPDATE workflow_steps SET message_id = ?, headers = ?, retries = ?, retry_delay = ? WHERE account_id = ? AND run_id = ? AND position = ?",
    );
  }

  insertRun(run: RunRecord): void {
    this.insertRunStmt.run(runParams(run) as never);
  }

  /** Writes every field of a run back (runs are small; one statement for every change). */
  saveRun(run: RunRecord): void {
    this.updateRunStmt.run(runParams(run) as never);
  }

  getRun(accountId: string, runId: string): RunRecord | undefined {
    const row = this.getRunStmt.get(accountId, runId);
    return row ? toRun(row) : undefined;
  }

  /** Appends an entry at the end of the run's list; returns its position. */
  appendStep(entry: Omit<StepEntry, "position">): number {
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
    } as never);
    return position;
  }

  steps(accountId: string, runId: string): StepEntry[] {
    return this.stepsStmt.all(accountId, runId).map(toStep);
  }

  /** The run's list up to and including `position`. */
  prefix(accountId: string, runId: string, position: number): StepEntry[] {
    return this.prefixStmt.all(accountId, runId, position).map(toStep);
  }

  stepOfMessage(messageId: string): StepEntry | undefined {
    const row = this.stepByMessageStmt.get(messageId);
    return row ? toStep(row) : undefined;
  }

  /** Points an entry at another message (the SDK's re-trigger of a run started without it). */
  retagStep(entry: StepEntry): void {
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

  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  listRuns(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number): RunRecord[] {
    const clauses = ["account_id = $account"];
    const params: Record<string, string | number> = { account: accountId };
    let n = 0;
    const bind = (value: string | number) => {
      const key = `p${n++}`;
      params[key] = value;
      return `$${key}`;
    };
    const anyOf = (column: string, values: readonly (string | number)[] | undefined) => {
      if (values?.length) clauses.push(`${column} IN (${values.map(bind).join(", ")})`);
    };
    anyOf("run_id", f.runIds);
    anyOf("state", f.states);
    if (f.url !== undefined) {
      const url = bind(f.url);
      clauses.push(f.urlPrefix ? `substr(url, 1, length(${url})) = ${url}` : `url = ${url}`);
    }
    if (f.labels?.length) {
      // A run carries several labels comma-separated; any one of them matches.
      clauses.push(`(${f.labels.map((l) => `(',' || label || ',') LIKE ${bind(`%,${escapeLike(l)},%`)} ESCAPE '\\'`).join(" OR ")})`);
    }
    if (f.callerIp !== undefined) clauses.push(`caller_ip = ${bind(f.callerIp)}`);
    if (f.flowControlKey !== undefined) clauses.push(`flow_key = ${bind(f.flowControlKey)}`);
    if (f.createdAt !== undefined) clauses.push(`created_at = ${bind(f.createdAt)}`);
    if (f.fromDate !== undefined) clauses.push(`created_at >= ${bind(f.fromDate)}`);
    if (f.toDate !== undefined) clauses.push(`created_at <= ${bind(f.toDate)}`);
    if (beforeSeq !== null) clauses.push(`seq < ${bind(beforeSeq)}`);
    const sql = `SELECT * FROM workflow_runs WHERE ${clauses.join(" AND ")} ORDER BY seq DESC LIMIT ${bind(limit)}`;
    return this.db.query<RunRow, Record<string, string | number>>(sql).all(params).map(toRun);
  }

  /** Finished runs that ended before `beforeMs` leave with their steps (plan log retention). */
  prune(accountId: string, beforeMs: number): number {
    const old = this.db
      .query<{ run_id: string }, [string, number]>(
        "SELECT run_id FROM workflow_runs WHERE account_id = ? AND completed_at IS NOT NULL AND completed_at < ?",
      )
      .all(accountId, beforeMs);
    for (const { run_id } of old) this.deleteRun(accountId, run_id);
    return old.length;
  }

  deleteRun(accountId: string, runId: string): void {
    this.db.query("DELETE FROM workflow_steps WHERE account_id = ? AND run_id = ?").run(accountId, runId);
    this.db.query("DELETE FROM workflow_runs WHERE account_id = ? AND run_id = ?").run(accountId, runId);
  }

  deleteAccount(accountId: string): void {
    this.db.query("DELETE FROM workflow_steps WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM workflow_runs WHERE account_id = ?").run(accountId);
  }
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
