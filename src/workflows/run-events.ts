import type { DlqStorage } from "../dlq/storage.ts";
import { headerMap } from "../messages/views.ts";
import type { MessageEventMap, MessageListener } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { FailureCallbackState, FailureFunction, StepDeliveryState, StepError } from "./model.ts";
import { textOf } from "./raw-steps.ts";
import type { RunEndings } from "./run-endings.ts";
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
    private readonly settler: { settleAfterCommit(accountId: string, runId: string): void; cancelAfterCommit(accountId: string, messageId: string): void },
  ) {}

  created({ message: m }: MessageEventMap["created"]): void {
    const tag = m.workflow;
    if (tag?.callType === "fromCallback") {
      const run = this.runs.getRun(m.accountId, tag.runId);
      if (!run || !isActive(run.state)) return;
      this.runs.appendStep({
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
    } else if (tag?.callType === "failureCall") {
      this.updateFailureFunction(m, (f) => ({ ...f, messageId: m.id, url: m.url, state: "CALLBACK_INPROGRESS", nextDeliveryTime: undefined }));
    }
  }

  delivered({ message: m, outcome }: MessageEventMap["delivered"]): void {
    if (m.workflow?.callType === "failureCall") return this.failureCallEnded(m, "CALLBACK_SUCCESS", outcome);
    this.delivery(m, "DELIVERED");
  }

  retried({ message: m, outcome, error, nextDeliveryAt, atMs }: MessageEventMap["retried"]): void {
    const tag = m.workflow;
    if (!tag) return;
    this.runs.addError(m.accountId, tag.runId, m.id, stepError(outcome, error, atMs));
    if (tag.callType === "failureCall") return this.updateFailureFunction(m, (f) => ({ ...f, nextDeliveryTime: nextDeliveryAt }));
    this.delivery(m, "RETRY", nextDeliveryAt);
    // An attempt that was under way when its run ended was spared; its run wants no more of it.
    const run = this.runs.getRun(m.accountId, tag.runId);
    if (run && !isActive(run.state)) this.settler.cancelAfterCommit(m.accountId, m.id);
  }

  failed({ message: m, outcome, error, dlqId, atMs }: MessageEventMap["failed"]): void {
    const tag = m.workflow;
    if (!tag) return;
    this.runs.addError(m.accountId, tag.runId, m.id, stepError(outcome, error, atMs));
    if (tag.callType === "failureCall") return this.failureCallEnded(m, "CALLBACK_FAIL", outcome);
    this.delivery(m, "FAILED");
    // A failed `context.call` is the call's answer, not the run's failure: the callback carries it.
    if (tag.callType !== "step" && tag.callType !== "fromCallback") return;
    const run = this.runs.getRun(m.accountId, tag.runId);
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
    this.endings.end(run, "failed", atMs, { dlqId, failureFunction });
    this.settler.settleAfterCommit(run.accountId, run.runId);
  }

  cancelled({ message: m }: MessageEventMap["cancelled"]): void {
    if (m.workflow?.callType === "failureCall") this.updateFailureFunction(m, (f) => ({ ...f, state: "CALLBACK_CANCELED", nextDeliveryTime: undefined }));
    else this.delivery(m, "CANCELED");
  }

  /** Where the delivery of a run's message (a step, a call or its answer) stands now. */
  private delivery(m: MessageRecord, state: StepDeliveryState, nextDeliveryAt?: number): void {
    if (m.workflow) this.runs.setDelivery(m.accountId, m.workflow.runId, m.id, state, nextDeliveryAt);
  }

  private failureCallEnded(m: MessageRecord, state: FailureCallbackState, outcome: DeliveryOutcome): void {
    this.updateFailureFunction(m, (f) => ({
      ...f,
      state,
      responseStatus: outcome.status,
      responseBody: outcome.body ? textOf(outcome.body) : undefined,
      responseHeaders: outcome.headers ? headerMap(outcome.headers) : undefined,
      nextDeliveryTime: undefined,
    }));
  }

  private updateFailureFunction(m: MessageRecord, change: (f: FailureFunction) => FailureFunction): void {
    const run = this.runs.getRun(m.accountId, m.workflow!.runId);
    if (!run?.failureFunction) return;
    const changed = change(run.failureFunction);
    run.failureFunction = changed;
    this.runs.saveRun(run);
    this.dlq.setFailureFunctionState(m.accountId, changed.dlqId, changed.state);
  }
}
