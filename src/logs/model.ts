export const EVENT_STATES = [
  "CREATED",
  "ACTIVE",
  "RETRY",
  "ERROR",
  "DELIVERED",
  "FAILED",
  "CANCEL_REQUESTED",
  "CANCELED",
] as const;
export type EventState = (typeof EVENT_STATES)[number];

export interface EventRecord {
  time: number;
  accountId: string;
  messageId: string;
  state: EventState;
  url: string;
  topicName?: string;
  endpointName?: string;
  queueName?: string;
  scheduleId?: string;
  labels?: string[];
  flowControlKey?: string;
  callerIp?: string;
  /** The message's `Svc-Retry-Delay` expression, on every entry of a message that has one. */
  retryDelayExpr?: string;
  error?: string;
  nextDeliveryTime?: number;
  method?: string;
  maxRetries?: number;
  header?: Array<[string, string]>;
  body?: Uint8Array;
  responseStatus?: number;
  responseBody?: Uint8Array;
  /** The destination's answer headers, on ERROR entries. */
  responseHeaders?: Array<[string, string]>;
  callback?: string;
  callbackHeaders?: Array<[string, string]>;
  failureCallback?: string;
  failureCallbackHeaders?: Array<[string, string]>;
  /** The per-attempt timeout of the message, ms. */
  timeoutMs?: number;
  /** An injected fault shaped this attempt (docs/test-double.md, Fault injection). */
  fault?: { kind: string; rule: string };
  /** The message's trace (OpenTelemetry), while tracing is on. */
  traceId?: string;
}
