import type { Dialect } from "../core/dialect.ts";
import { headerParam, type ParameterDoc } from "../openapi/doc.ts";

/**
 * The publish settings (`<Prefix>-<Suffix>` headers, or the lowercase query parameter of the same
 * name), as the API documents them. options.ts reads them; a test keeps the two lists equal.
 */
interface Setting {
  suffix: string;
  description: string;
  schema?: object;
}

const INTEGER = { type: "string", pattern: "^[0-9]+$" };
const BOOLEAN = { type: "string", enum: ["true", "false"] };
const METHOD = { type: "string", enum: ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] };
const DURATION = "a duration such as 30s, 5m, 1h30m or 2d; a bare number is seconds";

function callbackSettings(kind: "Callback" | "Failure-Callback", when: string): Setting[] {
  return [
    { suffix: kind, description: `URL that receives ${when}, as a message of its own (signed, retried, logged)` },
    { suffix: `${kind}-Method`, description: `method of that message (default POST)`, schema: METHOD },
    { suffix: `${kind}-Timeout`, description: `its timeout: ${DURATION}` },
    { suffix: `${kind}-Retries`, description: "its retries (default: the message's)", schema: INTEGER },
    { suffix: `${kind}-Delay`, description: `its delay: ${DURATION}` },
    { suffix: `${kind}-Retry-Delay`, description: "its retry delay expression (see Retry-Delay)" },
    { suffix: `${kind}-Forward-{Name}`, description: "a header `Name` sent with it (the prefix is stripped)" },
  ];
}

export const PUBLISH_SETTINGS: readonly Setting[] = [
  { suffix: "Method", description: "method of the delivery (default POST)", schema: METHOD },
  { suffix: "Delay", description: `wait before the first attempt: ${DURATION}` },
  { suffix: "Not-Before", description: "first attempt not before this Unix time, in seconds (wins over Delay)", schema: INTEGER },
  { suffix: "Retries", description: "retries after a failed attempt (default 3, at most the plan's limit)", schema: INTEGER },
  {
    suffix: "Retry-Delay",
    description: "ms to wait before a retry, as an expression of `retried` (e.g. `1000 * pow(2, retried)`); default exponential backoff",
  },
  { suffix: "Timeout", description: `how long one attempt may take: ${DURATION}` },
  ...callbackSettings("Callback", "each attempt's answer"),
  ...callbackSettings("Failure-Callback", "the last answer when the message fails into the DLQ"),
  { suffix: "Forward-{Name}", description: "a header `Name` sent to the destination (the prefix is stripped)" },
  { suffix: "Header-Forward", description: "true: forward every request header except transport, credentials and these settings", schema: BOOLEAN },
  { suffix: "Label", description: "labels of the message, comma separated (filters of logs and the DLQ)" },
  { suffix: "Flow-Control-Key", description: "messages of one key share its limits (with Flow-Control-Value)" },
  { suffix: "Flow-Control-Value", description: "the key's limits: `parallelism=<n>, rate=<n>, period=<duration>`, any subset" },
  { suffix: "Deduplication-Id", description: "a second message with this id within 10 minutes is accepted but not delivered (202)" },
  { suffix: "Content-Based-Deduplication", description: "true: the same body, destination and headers within 10 minutes count as a duplicate", schema: BOOLEAN },
  { suffix: "Queue-Name", description: "deliver through this queue (FIFO, the queue's parallelism)" },
  { suffix: "Redact-Fields", description: "`body`, `header`, `header[Name]`, comma separated: shown as `REDACTED:<sha256 hex>` wherever read back, delivered as is" },
];

/** Settings of a schedule only: its cron and its id. */
export const SCHEDULE_SETTINGS: readonly Setting[] = [
  { suffix: "Cron", description: "five-field cron expression in UTC, or `CRON_TZ=Area/City <fields>` (required)" },
  { suffix: "Schedule-Id", description: "the schedule's id (creating it again replaces it); default: a new id" },
];

/** The settings as header parameters of an operation, in the dialect's prefix. */
export function settingParameters(dialect: Dialect, settings: readonly Setting[] = PUBLISH_SETTINGS): ParameterDoc[] {
  return settings.map((s) =>
    headerParam(
      `${dialect.prefix}-${s.suffix}`,
      `${s.description}. Also as the query parameter ${`${dialect.prefix}-${s.suffix}`.toLowerCase()}.`,
      s.schema,
    ),
  );
}
