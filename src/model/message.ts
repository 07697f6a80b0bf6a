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
}

export type MessageKind = "message" | "callback" | "failure-callback";

/**
 * Waiting states of a stored message. A message leaves the table when it is delivered, failed
 * (then it lives on in the DLQ) or cancelled; its history stays in the event log.
 * PARKED: waits behind others in a queue; not dispatchable until promoted.
 * HELD: was due, but its flow-control key already had the most deliveries the dispatcher hands to
 * a worker at once; released (due again) when one of that key's attempts ends.
 */
export type MessageState = "CREATED" | "RETRY" | "ACTIVE" | "PARKED" | "HELD";

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
}
