import type { FlowControl } from "../model/message.ts";
import type { RedactSpec } from "../model/redact.ts";
import type { PublishOptions } from "../messages/options.ts";

/** What a schedule's messages will be like, parsed once at creation, for the Schedule view. */
export interface ScheduleSettings {
  method: string;
  headers: Array<[string, string]>;
  retries: number;
  delayMs: number;
  callback?: string;
  failureCallback?: string;
  retryDelayExpr?: string;
  labels?: string[];
  flow?: FlowControl;
  queueName?: string;
  redact?: RedactSpec;
}

export function settingsOf(o: PublishOptions): ScheduleSettings {
  return {
    method: o.method,
    headers: o.headers,
    retries: o.retries,
    delayMs: o.delayMs,
    callback: o.callback?.url,
    failureCallback: o.failureCallback?.url,
    retryDelayExpr: o.retryDelayExpr,
    labels: o.labels,
    flow: o.flow,
    queueName: o.queueName,
    redact: o.redact,
  };
}
