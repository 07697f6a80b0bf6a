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

export interface DlqFilter {
  /** Any of these entries (the SDK's `listMessages({ dlqIds })` and bulk actions). */
  dlqIds?: string[];
  messageId?: string;
  url?: string;
  topicName?: string;
  scheduleId?: string;
  queueName?: string;
  label?: string;
  flowControlKey?: string;
  callerIp?: string;
  responseStatus?: number;
  fromDate?: number;
  toDate?: number;
}
