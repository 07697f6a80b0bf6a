import type { RedactSpec } from "../model/redact.ts";
import type { CallbackSpec, FailureCallbackState, FlowControl } from "../model/message.ts";
import type { TraceContext } from "../model/trace.ts";

export type { FailureCallbackState, WorkflowTag } from "../model/message.ts";

/** The states a run's log shows (`workflowState`). */
export const RUN_STATES = ["RUN_STARTED", "RUN_SUCCESS", "RUN_FAILED", "RUN_CANCELED"] as const;
export type RunState = (typeof RUN_STATES)[number];

/** The states of a run's steps in its log (`steps[].steps[].state`). */
export const STEP_STATES = ["STEP_SUCCESS", "STEP_PROGRESS", "STEP_RETRY", "STEP_FAILED", "STEP_CANCELED"] as const;
export type StepState = (typeof STEP_STATES)[number];

/**
 * How an entry of a run's step list came to be: `step` is anything the workflow endpoint
 * receives as a step (the trigger's payload, a step result, a plan step, an event), `toCallback`
 * a `context.call` request to a third party, `fromCallback` that party's answer on its way back.
 * The SDK skips everything but `step` when it rebuilds the run.
 */
export type CallType = "step" | "toCallback" | "fromCallback";

/**
 * The trigger's settings that every later message of the run inherits (the SDK sends them only
 * on the trigger): retries, retry delay, flow control, the failure callback and the user's own
 * headers.
 */
export interface RunConfig {
  retries: number;
  retryDelayExpr?: string;
  flow?: FlowControl;
  failureCallback?: CallbackSpec;
  /** Headers the trigger forwards to the endpoint (the user's headers, prefix stripped). */
  headers: Array<[string, string]>;
  /** The trigger's Redact-Fields: every message of the run, and its log, show them redacted. */
  redact?: RedactSpec;
}

/** Who started a run with `context.invoke`, and where its result goes back. */
export interface Invoker {
  workflowRunId: string;
  workflowUrl: string;
  workflowRunCreatedAt: number;
  /** The invoking step's headers, as the invoke body carries them. */
  headers: Record<string, string[]>;
  /** The invoking step (`stepId`, `stepName`, `stepType`, `concurrent`, `targetStep`). */
  step: Record<string, unknown>;
}

/** The run and step a rerun started from (`POST /v2/workflows/runs/{id}/rerun`), as its log shows them. */
export interface RerunSource {
  workflowRunId: string;
  workflowRunCreatedAt: number;
  /** The step: its name and id where the source run's log shows them (`init`: from the start). */
  stepName?: string;
  stepId?: number;
}

/** The failure function's call after a run failed, as logs and the DLQ show it. */
export interface FailureFunction {
  messageId: string;
  url: string;
  state: FailureCallbackState;
  dlqId: string;
  failStatus: number;
  failResponse: string;
  failHeaders: Record<string, string[]>;
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: Record<string, string[]>;
  /** When its call is tried again, while it is retrying. */
  nextDeliveryTime?: number;
}

export interface RunRecord {
  accountId: string;
  runId: string;
  /** Insertion order: the cursor of run listings. */
  seq?: number;
  url: string;
  createdAt: number;
  state: RunState;
  completedAt?: number;
  labels?: string[];
  callerIp?: string;
  config: RunConfig;
  /** The route function's return value as JSON text (the body of the SDK's end-of-run call). */
  result?: string;
  invoker?: Invoker;
  /** A rerun: the run it reran and the step it reran from. */
  rerunOf?: RerunSource;
  dlqId?: string;
  failureFunction?: FailureFunction;
  /**
   * Started by `POST /v2/trigger` (a caller without the SDK) with `<Prefix>-Workflow-Unknown-Sdk`:
   * the endpoint's SDK re-triggers the run with the same id, which then counts as the run's start,
   * not as a duplicate.
   */
  awaitingSdk?: boolean;
  /** Started by `POST /v2/trigger`: only an SDK from 1.0 on may answer its start (answers.ts). */
  restTriggered?: boolean;
  /** Ended, but what it left behind (messages, waiters, an invoker) is not yet dealt with. */
  unsettled?: boolean;
  /** The run's span in its trace (its steps are children of it), while tracing is on. */
  trace?: TraceContext;
}

/** Where the delivery of a list entry's message stands (the run's log shows it). */
export type StepDeliveryState = "PENDING" | "RETRY" | "DELIVERED" | "FAILED" | "CANCELED";

/** The step a message belongs to, as the SDK names it (`context.call`'s request and answer). */
export interface StepIdentity {
  stepId: number;
  stepName: string;
  stepType: string;
  concurrent: number;
}

/** What only the run's log needs of an entry, known when it is published. */
export interface StepDetails {
  /** A `context.call`'s request: the call step it makes. */
  step?: StepIdentity;
  /** An event or timeout for a wait: when the wait would have timed out (Unix ms). */
  waitTimeoutDeadline?: number;
}

/** One failed attempt of a run's message, as the run's log shows it (the SDK's `StepError`). */
export interface StepError {
  error: string;
  body: string;
  headers: Record<string, string[]>;
  status: number;
  time: number;
}

/** One entry of a run's step list (the SDK's `RawStep`), with what logs need about it. */
export interface StepEntry {
  accountId: string;
  runId: string;
  /** Position in the run's list, from 0 (the initial payload). */
  position: number;
  messageId: string;
  callType: CallType;
  url: string;
  method: string;
  body: Uint8Array;
  createdAt: number;
  /** The message's headers to the endpoint and its retry settings, for logs. */
  headers: Array<[string, string]>;
  retries: number;
  retryDelayExpr?: string;
  /** How its delivery stands, and when it is tried again while it retries. */
  state: StepDeliveryState;
  nextDeliveryAt?: number;
  details?: StepDetails;
}

/** A `context.waitForEvent` / `waitForWebhook` waiting for its event. */
export interface Waiter {
  accountId: string;
  runId: string;
  eventId: string;
  url: string;
  createdAt: number;
  deadline: number;
  /** The waiting step's publish headers: the event is published to `url` with them. */
  headers: Array<[string, string]>;
  timeoutUrl: string;
  timeoutBody?: string;
  timeoutHeaders: Record<string, string[]>;
  /** `timeout` as the step gave it (`7d`, `30s`), for the waiters listing. */
  timeout: string;
  step: Record<string, unknown>;
}
