import { compact, headerMap } from "../messages/views.ts";
import { fromBase64 } from "../util/base64.ts";
import type { StepDeliveryState, StepEntry, StepError, StepIdentity, Waiter } from "./model.ts";
import { textOf } from "./raw-steps.ts";

/*
 * The entries of a run's log, one step each, as the hosted log shows them; run-log.ts places them
 * in order and in their groups.
 */

/** One step of a run's log, as the hosted log shows it. */
export type StepLog = Record<string, unknown>;

/** A run this run started with `context.invoke`, as its invoke step shows it. */
export interface InvokedRun {
  runId: string;
  url: string;
  createdAt: number;
  /** The invoking step of this run. */
  step: Record<string, unknown>;
  /** The invoked run's first message (its start), its payload and the headers it was sent with. */
  messageId?: string;
  body: string;
  headers: Record<string, string[]>;
  /** Once the invoked run has ended: what the invoke resolves to, as JSON text. */
  result?: string;
}

/** A step shown while it is under way: how its latest message stands. */
export const SHOWN_STATE: Record<StepDeliveryState, string> = {
  PENDING: "STEP_PROGRESS",
  RETRY: "STEP_RETRY",
  DELIVERED: "STEP_PROGRESS",
  FAILED: "STEP_FAILED",
  CANCELED: "STEP_CANCELED",
};

export const NEXT_STATE: Record<Exclude<StepDeliveryState, "DELIVERED">, string> = {
  PENDING: "STEP_PROGRESS",
  RETRY: "STEP_RETRY",
  FAILED: "STEP_FAILED",
  CANCELED: "STEP_CANCELED",
};

/** `out` as the hosted log shows it: the text the step carries (JSON text for most steps). */
export const outText = (out: unknown): string | undefined => (out === undefined ? undefined : typeof out === "string" ? out : JSON.stringify(out));

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The step a failing delivery was running, as the SDK reports it (`<Prefix>-Error-Step-Name`). */
export function failingStepName(errors: StepError[] | undefined): string | undefined {
  const last = errors?.at(-1);
  if (!last) return undefined;
  const name = Object.keys(last.headers).find((h) => h.toLowerCase().endsWith("-error-step-name"));
  return name ? last.headers[name]![0] : undefined;
}

/** A `context.call`: its request (the `toCallback` entry) and, once it came back, its answer. */
export interface Call {
  request: StepEntry;
  step?: StepIdentity;
  answer?: StepEntry;
}

/** The fields every step of the log has, from the message that carries it. */
export function stepBase(e: StepEntry, id: Partial<StepIdentity>, state: string): StepLog {
  return compact({
    stepId: id.stepId,
    stepName: id.stepName,
    stepType: id.stepType,
    callType: e.callType,
    messageId: e.messageId,
    concurrent: id.concurrent,
    state,
    createdAt: e.createdAt,
    headers: headerMap(e.headers),
    retries: e.retries,
    retryDelay: e.retryDelayExpr,
  });
}

export function initLog(e: StepEntry): StepLog {
  return { ...stepBase(e, { stepName: "init", stepType: "Initial", concurrent: 1 }, "STEP_SUCCESS"), out: textOf(e.body) };
}

/** A `context.call` on its way: to the third party, then its answer back to the workflow. */
export function callLog(call: Call, id: StepIdentity): StepLog {
  const latest = call.answer ?? call.request;
  const log = { ...stepBase(latest, id, SHOWN_STATE[latest.state]), ...callRequestFields(call.request) };
  const answer = call.answer && (parseJson(textOf(call.answer.body)) as { status?: number; body?: string; header?: Record<string, string[]> } | undefined);
  if (answer) {
    Object.assign(log, {
      callResponseStatus: answer.status,
      callResponseBody: typeof answer.body === "string" ? textOf(fromBase64(answer.body)) : undefined,
      callResponseHeaders: answer.header ?? {},
    });
  }
  return log;
}

export function waitingLog(w: Waiter, id: StepIdentity): StepLog {
  return compact({
    stepId: id.stepId,
    stepName: id.stepName,
    stepType: id.stepType,
    callType: "step",
    concurrent: id.concurrent,
    state: "STEP_PROGRESS",
    createdAt: w.createdAt,
    waitEventId: w.eventId,
    waitTimeoutDuration: w.timeout,
    waitTimeoutDeadline: w.deadline,
    waitTimeout: false,
  });
}

export function invokingLog(invoked: InvokedRun, id: StepIdentity): StepLog {
  return compact({
    stepId: id.stepId,
    stepName: id.stepName,
    stepType: "Invoke",
    callType: "step",
    messageId: invoked.messageId,
    concurrent: id.concurrent,
    // Done once the invoked run has ended, even where this run can no longer take its answer
    // (it failed or was cancelled meanwhile).
    state: invoked.result === undefined ? "STEP_PROGRESS" : "STEP_SUCCESS",
    createdAt: invoked.createdAt,
    out: invoked.result,
    ...invokedFields(invoked),
  });
}

/** A step's identity from a step object the SDK sent (a wait's or an invoke's). */
export function identity(step: Record<string, unknown>): StepIdentity | undefined {
  const { stepId, stepName, stepType, concurrent } = step;
  if (typeof stepId !== "number" || typeof stepName !== "string") return undefined;
  return { stepId, stepName, stepType: typeof stepType === "string" ? stepType : "Run", concurrent: typeof concurrent === "number" ? concurrent : 1 };
}

export function callRequestFields(request: StepEntry) {
  return {
    callUrl: request.url,
    callMethod: request.method,
    callHeaders: headerMap(request.headers),
    callBody: textOf(request.body),
  };
}

export function invokedFields(invoked: InvokedRun) {
  return {
    invokedWorkflowRunId: invoked.runId,
    invokedWorkflowUrl: invoked.url,
    invokedWorkflowCreatedAt: invoked.createdAt,
    invokedWorkflowRunBody: invoked.body,
    invokedWorkflowRunHeaders: invoked.headers,
  };
}

export function replaceContents(target: StepLog, source: StepLog): void {
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, source);
}
