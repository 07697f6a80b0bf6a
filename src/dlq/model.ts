import type { MessageRecord } from "../model/message.ts";

export interface DlqEntry {
  seq: number;
  dlqId: string;
  failedAt: number;
  message: MessageRecord;
  responseStatus?: number;
  responseHeaders?: Array<[string, string]>;
  responseBody?: Uint8Array;
  error?: string;
}
