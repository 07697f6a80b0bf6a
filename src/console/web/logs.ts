import { api, type Query } from "./api.ts";

/** One entry of `GET /v2/logs`. */
export interface LogEntry {
  time: number;
  messageId: string;
  state: string;
  url?: string;
  error?: string;
  nextDeliveryTime?: number;
  topicName?: string;
  endpointName?: string;
  scheduleId?: string;
  queueName?: string;
  header?: Record<string, string[]>;
  body?: string;
  responseStatus?: number;
  responseBody?: string;
  method?: string;
  maxRetries?: number;
  label?: string;
  labels?: string[];
  flowControlKey?: string;
  retryDelayExpression?: string;
  /** An injected fault (a rule at /__svc/faults) shaped this attempt. */
  fault?: { kind: string; rule: string };
  /** The message's OpenTelemetry trace, when svcd traces (docs/operations.md, Tracing). */
  traceId?: string;
}

export interface LogPage {
  cursor?: string;
  logs: LogEntry[];
}

export const readLogs = (query: Query) => api<LogPage>("/v2/logs", { query });

export const MESSAGE_STATES = ["CREATED", "ACTIVE", "RETRY", "ERROR", "DELIVERED", "FAILED", "CANCEL_REQUESTED", "CANCELED", "IN_PROGRESS"];

/** Labels of an entry: `labels` when the server sends several, else `label`. */
export const labelsOf = (e: { label?: string; labels?: string[] }) => e.labels ?? (e.label ? [e.label] : []);
