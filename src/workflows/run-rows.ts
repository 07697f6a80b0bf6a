import { HeaderPairs } from "../model/columns.ts";
import { joinLabels, splitLabels } from "../model/labels.ts";
import { applyFilter } from "../filters/sql.ts";
import { jsonColumn } from "../store/json-column.ts";
import { Where } from "../store/where.ts";
import { ErrorHeadersJson, RunDataJson, StepDetailsJson, WaiterDataJson } from "./columns.ts";
import type { CallType, RunRecord, RunState, StepDeliveryState, StepEntry, StepError, Waiter } from "./model.ts";
import type { RunFilter } from "./storage.ts";

/**
 * The workflow tables' rows and how records become rows and back: every engine stores the same
 * columns, so both read and write through here.
 */

export interface RunRow {
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

export interface StepRow {
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

export interface ErrorRow {
  message_id: string;
  time: number;
  status: number;
  error: string;
  body: string;
  headers: string;
}

export interface WaiterRow {
  id: number;
  account_id: string;
  run_id: string;
  event_id: string;
  created_at: number;
  deadline: number;
  data: string;
}

type RunData = Pick<RunRecord, "config" | "invoker" | "failureFunction" | "awaitingSdk" | "rerunOf" | "restTriggered" | "trace">;
type WaiterData = Pick<Waiter, "url" | "headers" | "timeoutUrl" | "timeoutBody" | "timeoutHeaders" | "timeout" | "step">;

/** A waiter with the id its store gave it (`WaitStorage.delete` takes it). */
export type StoredWaiter = Waiter & { id: number };

const readRunData = jsonColumn("workflow_runs.data", RunDataJson);
const readHeaders = jsonColumn("workflow_steps.headers", HeaderPairs);
const readDetails = jsonColumn("workflow_steps.details", StepDetailsJson);
const readErrorHeaders = jsonColumn("workflow_step_errors.headers", ErrorHeadersJson);
const readWaiterData = jsonColumn("workflow_waiters.data", WaiterDataJson);

export function toRun(r: RunRow): RunRecord {
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

/** The columns of a run (`seq` is the engine's). */
export function runRowOf(run: RunRecord) {
  const data: RunData = {
    config: run.config,
    invoker: run.invoker,
    failureFunction: run.failureFunction,
    awaitingSdk: run.awaitingSdk || undefined,
    rerunOf: run.rerunOf,
    restTriggered: run.restTriggered || undefined,
    trace: run.trace,
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

export function toStep(r: StepRow): StepEntry {
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

/** The columns of a step entry. */
export function stepRowOf(entry: StepEntry): StepRow {
  return {
    account_id: entry.accountId,
    run_id: entry.runId,
    position: entry.position,
    message_id: entry.messageId,
    call_type: entry.callType,
    url: entry.url,
    method: entry.method,
    body: entry.body,
    created_at: entry.createdAt,
    headers: JSON.stringify(entry.headers),
    retries: entry.retries,
    retry_delay: entry.retryDelayExpr ?? null,
    state: entry.state,
    next_delivery_at: entry.nextDeliveryAt ?? null,
    details: entry.details ? JSON.stringify(entry.details) : null,
  };
}

/** The failed attempts of a run's messages, oldest first (rows in that order), by message id. */
export function errorsByMessage(rows: ErrorRow[]): Map<string, StepError[]> {
  const byMessage = new Map<string, StepError[]>();
  for (const r of rows) {
    const list = byMessage.get(r.message_id) ?? [];
    list.push({ error: r.error, body: r.body, headers: readErrorHeaders(r.headers), status: r.status, time: r.time });
    byMessage.set(r.message_id, list);
  }
  return byMessage;
}

export function toWaiter(r: WaiterRow): StoredWaiter {
  return {
    id: r.id,
    accountId: r.account_id,
    runId: r.run_id,
    eventId: r.event_id,
    createdAt: r.created_at,
    deadline: r.deadline,
    ...readWaiterData(r.data),
  };
}

/** The columns of a waiter (`id` is the engine's). */
export function waiterRowOf(w: Waiter): Omit<WaiterRow, "id"> {
  const data: WaiterData = {
    url: w.url,
    headers: w.headers,
    timeoutUrl: w.timeoutUrl,
    timeoutBody: w.timeoutBody,
    timeoutHeaders: w.timeoutHeaders,
    timeout: w.timeout,
    step: w.step,
  };
  return { account_id: w.accountId, run_id: w.runId, event_id: w.eventId, created_at: w.createdAt, deadline: w.deadline, data: JSON.stringify(data) };
}

/** Where a run keeps what the filters look at (`time`: its creation). */
const RUN_FILTER_COLUMNS = { time: "created_at", workflowRunId: "run_id", workflowCreatedAt: "created_at", state: "state" };

/** A page of run listings, newest first (`beforeSeq`: the previous page's cursor), in the shared query builder's SQL. */
export function runListQuery(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number) {
  const prefixes = f.urlPrefix ? f.urls : undefined;
  const where = applyFilter(new Where("account_id", accountId), { ...f, urls: prefixes ? undefined : f.urls, messageIds: undefined }, RUN_FILTER_COLUMNS);
  if (f.runs) {
    const pairs = f.runs.map((r) => `(run_id = ${where.bind(r.runId)} AND created_at = ${where.bind(r.createdAt)})`);
    // No pair given selects nothing (never every run).
    where.raw(pairs.length > 0 ? `(${pairs.join(" OR ")})` : "1 = 0");
  }
  where.add("seq", "<", beforeSeq ?? undefined);
  if (prefixes?.length) where.raw(`(${prefixes.map((p) => `substr(url, 1, length(${where.bind(p)})) = ${where.bind(p)}`).join(" OR ")})`);
  if (f.messageIds?.length) {
    const ids = f.messageIds.map((id) => where.bind(id));
    where.raw(`run_id IN (SELECT run_id FROM workflow_steps WHERE account_id = ${where.bind(accountId)} AND message_id IN (${ids.join(", ")}))`);
  }
  return where.select("workflow_runs", "seq DESC", limit);
}
