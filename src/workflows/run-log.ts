import { compact, headerMap } from "../messages/views.ts";
import { labelFields } from "../model/labels.ts";
import type { RunRecord, StepEntry } from "./model.ts";
import { isPlanStep, parseStep, textOf, type ParsedStep } from "./raw-steps.ts";

/** One failed attempt of a step's message, as logs show it. */
export interface StepError {
  error: string;
  body: string;
  headers: Record<string, string[]>;
  status: number;
  time: number;
}

/** Where a message of the run stands, read from the event log. */
export interface DeliveryStatus {
  state: "DELIVERED" | "PENDING" | "RETRY" | "FAILED" | "CANCELED";
  errors: StepError[];
}

export type StepLog = Record<string, unknown>;
export type StepLogGroup =
  | { type: "sequential"; steps: [StepLog] }
  | { type: "parallel"; steps: StepLog[] }
  | { type: "next"; steps: StepLog[] };

const NEXT_STATE: Record<Exclude<DeliveryStatus["state"], "DELIVERED">, string> = {
  PENDING: "STEP_PROGRESS",
  RETRY: "STEP_RETRY",
  FAILED: "STEP_FAILED",
  CANCELED: "STEP_CANCELED",
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** The part of a step log every completed step has. */
function baseLog(e: StepEntry, step: Pick<ParsedStep, "stepName" | "stepType" | "concurrent"> & { stepId?: number }, out: unknown): StepLog {
  return compact({
    stepId: step.stepId,
    stepName: step.stepName,
    stepType: step.stepType,
    callType: e.callType,
    messageId: e.messageId,
    out,
    concurrent: step.concurrent,
    state: "STEP_SUCCESS",
    createdAt: e.createdAt,
    headers: headerMap(e.headers),
    retries: e.retries,
    retryDelay: e.retryDelayExpr,
  });
}

/** A completed step: its result (`out` parsed as the SDK stored it) and its kind's own fields. */
function resultLog(e: StepEntry, step: ParsedStep, call: StepEntry | undefined): StepLog {
  const out = typeof step.out === "string" ? parseJson(step.out) : step.out;
  const log = baseLog(e, step, out);
  if (step.sleepFor !== undefined) log.sleepFor = step.sleepFor;
  if (step.sleepUntil !== undefined) log.sleepUntil = step.sleepUntil;
  if (typeof step.waitEventId === "string") {
    log.waitEventId = step.waitEventId;
    log.waitTimeout = step.waitTimeout === true;
    if (step.timeout !== undefined) log.waitTimeoutDuration = step.timeout;
  }
  if (step.stepType === "Call" && out && typeof out === "object") {
    const response = out as { status?: number; body?: unknown; header?: Record<string, string[]> };
    Object.assign(log, {
      callResponseStatus: response.status,
      callResponseBody: response.body,
      callResponseHeaders: response.header ?? {},
    });
    if (call) {
      Object.assign(log, {
        callUrl: call.url,
        callMethod: call.method,
        callHeaders: headerMap(call.headers),
        callBody: textOf(call.body),
      });
    }
  }
  return log;
}

/**
 * The run as `client.logs()` returns it (the SDK's `WorkflowRunLog`): the initial payload and each
 * completed step in order (parallel branches together), then the messages not yet delivered as
 * the `next` group (pending, retrying, failed or cancelled), with the run's ending.
 */
export function runLog(run: RunRecord, entries: StepEntry[], statusOf: (messageId: string) => DeliveryStatus) {
  const groups: StepLogGroup[] = [];
  let parallel: StepLog[] = [];
  const flushParallel = () => {
    if (parallel.length > 0) groups.push({ type: "parallel", steps: parallel });
    parallel = [];
  };
  const seenStepIds = new Set<number>();
  let lastCall: StepEntry | undefined;
  const next: StepLog[] = [];

  for (const e of entries) {
    const step = e.position === 0 ? undefined : e.callType === "step" ? parseStep(e.body) : undefined;
    if (e.position === 0) {
      groups.push({ type: "sequential", steps: [baseLog(e, { stepName: "init", stepType: "Initial", concurrent: 1 }, textOf(e.body))] });
    } else if (e.callType === "toCallback") {
      lastCall = e;
    } else if (step && isPlanStep(step)) {
      flushParallel();
    } else if (step && !seenStepIds.has(step.stepId)) {
      // A step delivered twice may have published its result twice: the first one counts.
      seenStepIds.add(step.stepId);
      const log = resultLog(e, step, step.stepType === "Call" ? lastCall : undefined);
      if (step.concurrent > 1) parallel.push(log);
      else {
        flushParallel();
        groups.push({ type: "sequential", steps: [log] });
      }
    }

    const status = statusOf(e.messageId);
    if (status.state !== "DELIVERED") {
      next.push(
        compact({
          messageId: e.messageId,
          stepName: step && isPlanStep(step) ? step.stepName : undefined,
          state: NEXT_STATE[status.state],
          retries: e.retries,
          retryDelay: e.retryDelayExpr,
          errors: status.errors.length > 0 ? status.errors : undefined,
        }),
      );
    }
  }
  flushParallel();
  if (next.length > 0) groups.push({ type: "next", steps: next });

  return compact({
    workflowRunId: run.runId,
    workflowUrl: run.url,
    workflowState: run.state,
    workflowRunCreatedAt: run.createdAt,
    workflowRunCompletedAt: run.completedAt,
    failureFunction: run.failureFunction ? compact({ ...run.failureFunction }) : undefined,
    steps: groups,
    workflowRunResponse: run.result,
    invoker: run.invoker
      ? {
          workflowRunId: run.invoker.workflowRunId,
          workflowUrl: run.invoker.workflowUrl,
          workflowRunCreatedAt: run.invoker.workflowRunCreatedAt,
        }
      : undefined,
    dlqId: run.dlqId,
    ...labelFields(run.labels),
  });
}

export type WorkflowRunLog = ReturnType<typeof runLog>;
