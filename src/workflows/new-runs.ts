import { badRequest } from "../core/errors.ts";
import { newMessageId, randomBase58 } from "../core/ids.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import { WorkflowMetric, type UsageRecorder } from "../metrics/usage.ts";
import type { MessageRecord } from "../model/message.ts";
import { childOf } from "../model/trace.ts";
import type { WriteTx } from "../store/transactor.ts";
import { overriddenConfig, type Overrides } from "./dlq-overrides.ts";
import { joinRun } from "./headers.ts";
import type { CallType, RunRecord, StepEntry } from "./model.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import type { RunStorage } from "./storage.ts";

/** A new run: its id and when it started. */
export interface StartedRun {
  workflowRunId: string;
  workflowCreatedAt: number;
}

export interface NewRunsDeps {
  names: WorkflowHeaderNames;
  runs: RunStorage;
  lifecycle: MessageLifecycle;
  usage: UsageRecorder;
}

/**
 * New runs made from an old one (a DLQ resume or restart, a rerun from a step), inside the write
 * that makes them: the run with the old run's settings and what the request overrides, and its
 * first message, which the new run delivers again in place of one of the old run's.
 */
export class NewRuns {
  constructor(private readonly deps: NewRunsDeps) {}

  /** Stores the new run (`extra`: what it says of itself beside the old run's settings). 400 when a named id is taken. */
  async start(
    tx: WriteTx,
    old: RunRecord,
    overrides: Overrides,
    nowMs: number,
    extra: Partial<RunRecord> = {},
  ): Promise<RunRecord> {
    const { config, labels } = overriddenConfig(old, overrides);
    const run: RunRecord = {
      accountId: old.accountId,
      runId: overrides.runId ?? `wfr_${randomBase58(21)}`,
      url: old.url,
      createdAt: nowMs,
      state: "RUN_STARTED",
      labels,
      callerIp: old.callerIp,
      config,
      // The new run goes on in the old run's trace.
      trace: old.trace && childOf(old.trace),
      ...extra,
    };
    // A named id may be taken (a generated one never is).
    if (overrides.runId !== undefined && (await this.deps.runs.getRun(tx, run.accountId, run.runId)))
      throw badRequest(`workflow run ${run.runId} already exists`);
    await this.deps.runs.insertRun(tx, run);
    this.deps.usage.countStored(tx, run.accountId, WorkflowMetric.runStarted, 1, nowMs);
    return run;
  }

  /** `template` again, as a new message of the new run, with the run's settings (due when the request delays it). */
  message(tx: WriteTx, template: MessageRecord, run: RunRecord, overrides: Overrides, nowMs: number): MessageRecord {
    this.deps.usage.countStored(tx, run.accountId, WorkflowMetric.messages, 1, nowMs);
    const dueAt = Math.max(nowMs, overrides.dueAt ?? nowMs);
    return {
      ...template,
      id: newMessageId(),
      state: "CREATED",
      dispatchAt: dueAt,
      notBefore: dueAt,
      labels: run.labels,
      createdAt: nowMs,
      retried: 0,
      maxRetries: run.config.retries,
      retryDelayExpr: run.config.retryDelayExpr,
      flow: run.config.flow,
      failureCallback: run.config.failureCallback,
      trace: run.trace && childOf(run.trace),
    };
  }

  /**
   * Appends `m` to the new run's list as the entry `entry` was in the old one (its body and headers
   * unless given), and hands it to the message engine: it is the new run's next delivery.
   */
  async deliver(
    tx: WriteTx,
    run: RunRecord,
    m: MessageRecord,
    entry: Pick<StepEntry, "body" | "headers"> & { callType?: CallType },
    nowMs: number,
  ): Promise<void> {
    const position = await this.deps.runs.appendStep(tx, {
      accountId: run.accountId,
      runId: run.runId,
      messageId: m.id,
      callType: entry.callType ?? "step",
      url: m.url,
      method: m.method,
      body: entry.body,
      createdAt: nowMs,
      headers: entry.headers,
      retries: m.maxRetries,
      retryDelayExpr: m.retryDelayExpr,
    });
    joinRun(this.deps.names, run, m, entry.callType === "fromCallback" ? "fromCallback" : "step", position === 0);
    await this.deps.lifecycle.accept(tx, m, nowMs);
  }
}
