import type { FailureCallbackState, MessageRecord } from "../model/message.ts";

export interface DlqEntry {
  seq: number;
  dlqId: string;
  failedAt: number;
  message: MessageRecord;
  responseStatus?: number;
  responseHeaders?: Array<[string, string]>;
  responseBody?: Uint8Array;
  error?: string;
  /** The entry of a failed workflow run: when the run started (the `workflowCreatedAt` filter). */
  workflowCreatedAt?: number;
  /** How that run's failure function's call stands (the `failureFunctionState` filter). */
  failureFunctionState?: FailureCallbackState;
}
