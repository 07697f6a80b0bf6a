import type { RedactSpec } from "./redact.ts";
import type { TraceContext } from "./trace.ts";

/** A message's flow-control settings: at most `parallelism` in flight and `rate` starts per `periodMs` for its key. */
export interface FlowControl {
  key: string;
  rate?: number;
  periodMs: number;
  parallelism?: number;
}

/** How a callback or failure callback of a message is to be published. */
export interface CallbackSpec {
  url: string;
  method: string;
  timeoutMs?: number;
  retries?: number;
  delayMs?: number;
  retryDelayExpr?: string;
  headers: Array<[string, string]>;
  /** The callback message's own settings, when they differ from its source's (workflow runs). */
  flow?: FlowControl;
  failureCallback?: CallbackSpec;
  workflow?: WorkflowTag;
}

/**
 * Marks a message as part of a workflow run: the workflow layer gives the mark its meaning (what
 * the delivery carries, what the message's end does to the run); the engine only keeps it.
 */
export interface WorkflowTag {
  runId: string;
  /** `step`: the endpoint runs the run's next step; `toCallback`: a `context.call` to a third party;
   * `fromCallback`: that call's answer on its way back; `failureCall`: the failure function's call. */
  callType: "step" | "toCallback" | "fromCallback" | "failureCall";
  /** Starts the run: its endpoint must answer as a workflow endpoint. */
  init?: boolean;
}

/** Where the failure function's call of a failed workflow run stands (logs, the DLQ and its filters). */
export const FAILURE_CALLBACK_STATES = ["CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL", "CALLBACK_CANCELED"] as const;
export type FailureCallbackState = (typeof FAILURE_CALLBACK_STATES)[number];

export type MessageKind = "message" | "callback" | "failure-callback";

/**
 * Waiting states of a stored message. A message leaves the table when it is delivered, failed
 * (then it lives on in the DLQ) or cancelled; its history stays in the event log.
 * PARKED: waits behind others in a queue; not dispatchable until promoted.
 * HELD: was due, but its flow-control key already had the most deliveries the dispatcher hands to
 * a worker at once; released (due again) when one of that key's attempts ends.
 */
export type MessageState = "CREATED" | "RETRY" | "ACTIVE" | "PARKED" | "HELD";

/**
 * The state of a message that is due again (released, promoted from its queue, handed back by a
 * node): CREATED while it was never retried, else RETRY (the logs tell a first attempt from a retry).
 */
export function dueAgainState(retried: number): "CREATED" | "RETRY" {
  return retried > 0 ? "RETRY" : "CREATED";
}

/**
 * `dueAgainState` as a SQL expression over a `messages` row (`alias`: the row's name in the
 * statement, when it has one). The text is the same on SQLite and PostgreSQL.
 */
export function dueAgainStateSql(alias?: string): string {
  return `CASE WHEN ${alias ? `${alias}.` : ""}retried > 0 THEN 'RETRY' ELSE 'CREATED' END`;
}

export interface MessageRecord {
  id: string;
  accountId: string;
  kind: MessageKind;
  state: MessageState;
  /** When the dispatcher may pick it up; null while in flight or parked. */
  dispatchAt: number | null;
  notBefore: number;
  createdAt: number;
  retried: number;
  maxRetries: number;
  url: string;
  method: string;
  /** Headers sent to the destination, forward prefixes already stripped. */
  headers: Array<[string, string]>;
  body: Uint8Array;
  timeoutMs: number;
  retryDelayExpr?: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  callerIp?: string;
  labels?: string[];
  flow?: FlowControl;
  callback?: CallbackSpec;
  failureCallback?: CallbackSpec;
  /** Its callback fires once, with the final answer (the first 2XX or the last failed attempt), not after every attempt. */
  callbackOnce?: boolean;
  workflow?: WorkflowTag;
  /** Shown redacted wherever it is read back; delivered as is (model/redact.ts). */
  redact?: RedactSpec;
  /** Its place in a distributed trace, while tracing is on (model/trace.ts). */
  trace?: TraceContext;
}
