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

/** DLQ ids are `<unix ms>-<seq>`: the time the message failed. */
export const failedAt = (e: DlqEntry) => Number(e.dlqId.split("-")[0]) || e.createdAt;

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

type DlqList = (query: Query) => Promise<{ messages: DlqEntry[] }>;

/**
 * Acts on every DLQ entry matching `filters` (all of them without filters), going round while the
 * server answers a cursor: it bounds each call. Only the entries there at the start are acted on:
 * a retried message or a restarted run failing again meanwhile matches too, and a later round
 * would act on it once more; so the filters end at the failure time of the newest match.
 * `counted` reads how many one call acted on; `list` is the listing the filters apply to.
 */
export async function actOnMatching<A>(
  method: "DELETE" | "POST",
  path: string,
  filters: Query,
  counted: (answer: A) => number,
  list: DlqList = readDlq,
): Promise<number> {
  const newest = (await list({ ...filters, count: 1 })).messages[0];
  if (!newest) return 0;
  const bounded = { ...filters, toDate: Math.min(Number(filters.toDate ?? Infinity), failedAt(newest)) };
  let done = 0;
  let cursor: string | undefined;
  for (let round = 0; round < 1000; round++) {
    const answer = await api<A & { cursor?: string }>(path, { method, body: { ...bounded, ...(cursor ? { cursor } : {}) } });
    done += counted(answer);
    if (!answer.cursor || answer.cursor === cursor) break;
    cursor = answer.cursor;
  }
  return done;
}

export const retryDlqMatching = (filters: Query) => actOnMatching("POST", "/v2/dlq/retry", filters, (a: { responses?: unknown[] }) => a.responses?.length ?? 0);
export const deleteDlqMatching = (filters: Query) => actOnMatching("DELETE", "/v2/dlq", filters, (a: { deleted?: number }) => a.deleted ?? 0);
