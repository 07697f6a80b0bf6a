import { api, ApiError, type Query } from "./api.ts";

/** A DLQ entry as `GET /v2/dlq` answers it. */
export interface DlqEntry {
  dlqId: string;
  messageId: string;
  url: string;
  topicName?: string;
  endpointName?: string;
  method?: string;
  header?: Record<string, string[]>;
  body?: string;
  bodyBase64?: string;
  maxRetries?: number;
  notBefore?: number;
  createdAt: number;
  callback?: string;
  failureCallback?: string;
  queueName?: string;
  scheduleId?: string;
  callerIP?: string;
  label?: string;
  labels?: string[];
  flowControlKey?: string;
  responseStatus?: number;
  responseHeader?: Record<string, string[]>;
  responseBody?: string;
  responseBodyBase64?: string;
  error?: string;
}

export const readDlq = (query: Query) => api<{ cursor?: string; messages: DlqEntry[] }>("/v2/dlq", { query });
export const readDlqEntry = (dlqId: string) => api<DlqEntry>(`/v2/dlq/${encodeURIComponent(dlqId)}`);
export const retryDlq = (dlqId: string) => api<{ messageId: string }>(`/v2/dlq/retry/${encodeURIComponent(dlqId)}`, { method: "POST" });
export const deleteDlq = (dlqId: string) => api(`/v2/dlq/${encodeURIComponent(dlqId)}`, { method: "DELETE" });

/** The DLQ entry of a failed message, if it is still there. */
export async function dlqEntryOf(messageId: string): Promise<DlqEntry | null> {
  try {
    const page = await readDlq({ messageId, count: 1 });
    return page.messages.find((m) => m.messageId === messageId) ?? null;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}
