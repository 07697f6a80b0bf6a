import type { DlqStorage } from "../dlq/storage.ts";
import { headerMap } from "../messages/views.ts";
import type { MessageEventMap, MessageListener } from "../model/events.ts";
import type { MessageRecord, WorkflowTag } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { FailureCallbackState, FailureFunction, StepDeliveryState, StepError } from "./model.ts";
import { textOf } from "./raw-steps.ts";
import type { RunEndings, SettleRequests } from "./run-endings.ts";
import { isActive } from "./run-state.ts";
import type { RunStorage } from "./storage.ts";

/** What the SDK's endpoint answered when a step failed: the error's message, else the body's text. */
function failResponse(outcome: DeliveryOutcome, error: string): string {
  if (!outcome.body?.length) return error;
  const text = textOf(outcome.body);
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed?.message === "string") return parsed.message;
  } catch {
    // not JSON: the text itself
  }
  return text;
}

/** A failed attempt as the run's log keeps it: the reason, and the answer with its headers. */
function stepError(outcome: DeliveryOutcome, error: string, atMs: number): StepError {
  return {
    error,
    body: outcome.body ? textOf(outcome.body) : "",
    headers: headerMap(outcome.headers),
    status: outcome.status ?? 0,
    time: atMs,
  };
}

/**
 * What a listener's method returns: undefined when it had nothing to do (a message of no run: every
 * message's every event comes here, answered without a promise), else the promise of its writes.
 */
type Done = Promise<void> | undefined;

/**
 * Keeps runs in step with their messages, inside the write that changes the message: a step that
 * fails for good fails its run (with the DLQ entry and the failure function's call), a call's
 * answer joins the run's list, the failure function's call records how it went, and every
 * message of a run records how its delivery stands and why its attempts failed (the run's log).
 */
export class RunEvents implements MessageListener {
  constructor(
    private readonly runs: RunStorage,
    private readonly dlq: Pick<DlqStorage, "setFailureFunctionState">,
    private readonly endings: RunEndings,
    private readonly settler: Pick<SettleRequests, "settleAfterCommit" | "cancelAfterCommit">,
  ) {}

  created({ message: m }: MessageEventMap["created"], tx: WriteTx): Done {
    const tag = m.workflow;
    if (tag?.callType === "fromCallback") return this.answerJoins(tx, m, tag.runId);
    if (tag?.callType !== "failureCall") return undefined;
    return this.updateFailureFunction(tx, m, (f) => ({
      ...f,
      messageId: m.id,
      url: m.url,
      state: "CALLBACK_INPROGRESS",
      nextDeliveryTime: undefined,
    }));
  }

  delivered({ message: m, outcome }: MessageEventMap["delivered"], tx: WriteTx): Done {
    if (m.workflow?.callType === "failureCall") return this.failureCallEnded(tx, m, "CALLBACK_SUCCESS", outcome);
    return this.delivery(tx, m, "DELIVERED");
  }

  retried(e: MessageEventMap["retried"], tx: WriteTx): Done {
    const tag = e.message.workflow;
    return tag && this.retriedInRun(tx, tag, e);
  }

  failed(e: MessageEventMap["failed"], tx: WriteTx): Done {
    const tag = e.message.workflow;
    return tag && this.failedInRun(tx, tag, e);
  }

  cancelled({ message: m }: MessageEventMap["cancelled"], tx: WriteTx): Done {
    if (m.workflow?.callType !== "failureCall") return this.delivery(tx, m, "CANCELED");
    const state = "CALLBACK_CANCELED";
    return this.updateFailureFunction(tx, m, (f) => ({ ...f, state, nextDeliveryTime: undefined }));
  }

  /** A call's answer joins its run's list, while the run goes on. */
  private async answerJoins(tx: WriteTx, m: MessageRecord, runId: string): Promise<void> {
    const run = await this.runs.getRun(tx, m.accountId, runId);
    if (!run || !isActive(run.state)) return;
    await this.runs.appendStep(tx, {
      accountId: m.accountId,
      runId: run.runId,
      messageId: m.id,
      callType: "fromCallback",
      url: m.url,
      method: m.method,
      body: m.body,
      createdAt: m.createdAt,
      headers: m.headers,
      retries: m.maxRetries,
      retryDelayExpr: m.retryDelayExpr,
    });
  }

  private async retriedInRun(tx: WriteTx, tag: WorkflowTag, e: MessageEventMap["retried"]): Promise<void> {
    const { message: m, outcome, error, nextDeliveryAt, atMs } = e;
    await this.runs.addError(tx, m.accountId, tag.runId, m.id, stepError(outcome, error, atMs));
    if (tag.callType === "failureCall")
      return this.updateFailureFunction(tx, m, (f) => ({ ...f, nextDeliveryTime: nextDeliveryAt }));
    await this.delivery(tx, m, "RETRY", nextDeliveryAt);
    // An attempt that was under way when its run ended was spared; its run wants no more of it.
    const run = await this.runs.getRun(tx, m.accountId, tag.runId);
    if (run && !isActive(run.state)) this.settler.cancelAfterCommit(tx, m.accountId, m.id);
  }

  private async failedInRun(tx: WriteTx, tag: WorkflowTag, e: MessageEventMap["failed"]): Promise<void> {
    const { message: m, outcome, error, dlqId, atMs } = e;
    await this.runs.addError(tx, m.accountId, tag.runId, m.id, stepError(outcome, error, atMs));
    if (tag.callType === "failureCall") return this.failureCallEnded(tx, m, "CALLBACK_FAIL", outcome);
    await this.delivery(tx, m, "FAILED");
    // A failed `context.call` is the call's answer, not the run's failure: the callback carries it.
    if (tag.callType !== "step" && tag.callType !== "fromCallback") return;
    const run = await this.runs.getRun(tx, m.accountId, tag.runId);
    if (!run || !isActive(run.state) || dlqId === undefined) return;
    const failureFunction = m.failureCallback && {
      messageId: "",
      url: m.failureCallback.url,
      state: "CALLBACK_INPROGRESS" as const,
      dlqId,
      failStatus: outcome.status ?? 0,
      failResponse: failResponse(outcome, error),
      failHeaders: headerMap(outcome.headers),
    };
    await this.endings.end(tx, run, "failed", atMs, { dlqId, failureFunction });
    this.settler.settleAfterCommit(tx, run.accountId, run.runId);
  }

  /** Where the delivery of a run's message (a step, a call or its answer) stands now. */
  private delivery(tx: WriteTx, m: MessageRecord, state: StepDeliveryState, nextDeliveryAt?: number): Done {
    return m.workflow && this.runs.setDelivery(tx, m.accountId, m.workflow.runId, m.id, state, nextDeliveryAt);
  }

  private failureCallEnded(tx: WriteTx, m: MessageRecord, state: FailureCallbackState, outcome: DeliveryOutcome) {
    return this.updateFailureFunction(tx, m, (f) => ({
      ...f,
      state,
      responseStatus: outcome.status,
      responseBody: outcome.body ? textOf(outcome.body) : undefined,
      responseHeaders: outcome.headers ? headerMap(outcome.headers) : undefined,
      nextDeliveryTime: undefined,
    }));
  }

  private async updateFailureFunction(tx: WriteTx, m: MessageRecord, change: (f: FailureFunction) => FailureFunction) {
    const run = await this.runs.getRun(tx, m.accountId, m.workflow!.runId);
    if (!run?.failureFunction) return;
    const changed = change(run.failureFunction);
    run.failureFunction = changed;
    await this.runs.saveRun(tx, run);
    await this.dlq.setFailureFunctionState(tx, m.accountId, changed.dlqId, changed.state);
  }
}
