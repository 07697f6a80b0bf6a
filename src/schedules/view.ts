import { labelFields, splitLabels } from "../model/labels.ts";
import { compact, headerMap } from "../messages/views.ts";
import { bodyFields } from "../util/base64.ts";
import { redactBody, redactHeaders } from "../model/redact.ts";
import { readLastStates, readScheduleSettings } from "./columns.ts";
import type { ScheduleSettings } from "./settings.ts";
import type { ScheduleRow } from "./storage.ts";

/** Schedules stored before several labels existed kept them as one string. */
const legacyLabels = (s: ScheduleSettings) => splitLabels((s as { label?: string }).label);

/** The Schedule object (docs/messaging-api.md): required fields always present, the others left out when empty. */
export function scheduleView(row: ScheduleRow) {
  const s = readScheduleSettings(row.settings) as ScheduleSettings;
  const states = readLastStates(row.last_states);
  return compact({
    scheduleId: row.id,
    cron: row.cron,
    destination: row.destination,
    createdAt: row.created_at,
    method: s.method,
    isPaused: row.paused === 1,
    // A schedule created with Redact-Fields shows them redacted, as its messages do.
    header: s.headers.length > 0 ? headerMap(redactHeaders(s.headers, s.redact)) : undefined,
    ...bodyFields(redactBody(row.body, s.redact), "body", "bodyBase64"),
    retries: s.retries,
    delay: s.delayMs > 0 ? Math.round(s.delayMs / 1000) : undefined,
    callback: s.callback,
    failureCallback: s.failureCallback,
    callerIp: row.caller_ip ?? undefined,
    queueName: s.queueName,
    flowControlKey: s.flow?.key,
    parallelism: s.flow?.parallelism,
    rate: s.flow?.rate,
    period: s.flow ? Math.round(s.flow.periodMs / 1000) : undefined,
    retryDelayExpression: s.retryDelayExpr,
    ...labelFields(s.labels ?? legacyLabels(s)),
    lastScheduleTime: row.last_schedule_time ?? undefined,
    nextScheduleTime: row.next_schedule_time ?? undefined,
    lastScheduleStates: Object.keys(states).length > 0 ? states : undefined,
  });
}
