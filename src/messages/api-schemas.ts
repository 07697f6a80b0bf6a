import { Type } from "@sinclair/typebox";

/** The answers of the messaging routes, as the OpenAPI document shows them (views.ts builds them). */

const Opt = Type.Optional;

/** Headers as the API shows them: canonical name → every value. */
export const HeaderMapJson = Type.Record(Type.String(), Type.Array(Type.String()));

export const MessageJson = Type.Object({
  messageId: Type.String(),
  url: Type.String(),
  topicName: Opt(Type.String({ description: "the URL Group it was published to" })),
  endpointName: Opt(Type.String()),
  method: Type.String(),
  header: HeaderMapJson,
  body: Opt(Type.String({ description: "the body, when it is UTF-8 text" })),
  bodyBase64: Opt(Type.String({ description: "the body in base64, when it is not UTF-8 text" })),
  maxRetries: Type.Integer(),
  notBefore: Type.Integer({ description: "Unix ms" }),
  createdAt: Type.Integer({ description: "Unix ms" }),
  callback: Opt(Type.String()),
  failureCallback: Opt(Type.String()),
  queueName: Opt(Type.String()),
  scheduleId: Opt(Type.String()),
  callerIP: Opt(Type.String()),
  label: Opt(Type.String({ description: "the first label" })),
  labels: Opt(Type.Array(Type.String())),
  flowControlKey: Opt(Type.String()),
  rate: Opt(Type.Integer()),
  period: Opt(Type.Integer({ description: "seconds" })),
  parallelism: Opt(Type.Integer()),
  retryDelayExpression: Opt(Type.String()),
});

export const PublishedJson = Type.Object({
  messageId: Type.String(),
  url: Opt(Type.String()),
  deduplicated: Opt(Type.Boolean({ description: "a duplicate: accepted, not delivered again" })),
});

export const PublishAnswerJson = Type.Union([PublishedJson, Type.Array(PublishedJson, { description: "one per endpoint of a URL Group" })]);

export const CancelledJson = Type.Object({
  cancelled: Type.Integer(),
  cursor: Opt(Type.String({ description: "more match: call again with this cursor" })),
});

export const DlqMessageJson = Type.Composite([
  MessageJson,
  Type.Object({
    dlqId: Type.String(),
    responseStatus: Type.Integer({ description: "the last answer's status; 0 when no answer came (see error)" }),
    error: Opt(Type.String({ description: "why no answer came (timeout, refused, ...)" })),
    responseHeader: Opt(HeaderMapJson),
    responseBody: Opt(Type.String()),
    responseBodyBase64: Opt(Type.String()),
  }),
]);

export const LogEventJson = Type.Object({
  time: Type.Integer({ description: "Unix ms" }),
  messageId: Type.String(),
  state: Type.String({ description: "CREATED, ACTIVE, RETRY, ERROR, DELIVERED, FAILED, CANCEL_REQUESTED or CANCELED" }),
  url: Type.String(),
  error: Opt(Type.String()),
  nextDeliveryTime: Opt(Type.Integer()),
  topicName: Opt(Type.String()),
  endpointName: Opt(Type.String()),
  scheduleId: Opt(Type.String()),
  queueName: Opt(Type.String()),
  header: Opt(HeaderMapJson),
  body: Opt(Type.String({ description: "base64" })),
  responseStatus: Opt(Type.Integer()),
  responseBody: Opt(Type.String({ description: "base64" })),
  responseHeaders: Opt(HeaderMapJson),
  timeout: Opt(Type.Integer({ description: "per-attempt timeout, ms" })),
  method: Opt(Type.String()),
  maxRetries: Opt(Type.Integer()),
  callback: Opt(Type.String()),
  callbackHeaders: Opt(HeaderMapJson),
  failureCallback: Opt(Type.String()),
  failureCallbackHeaders: Opt(HeaderMapJson),
  label: Opt(Type.String()),
  labels: Opt(Type.Array(Type.String())),
  flowControlKey: Opt(Type.String()),
  retryDelayExpression: Opt(Type.String()),
  retryDelayExpr: Opt(Type.String()),
  fault: Opt(
    Type.Object(
      { kind: Type.String(), rule: Type.String() },
      { description: "svcd only: an injected fault (POST /__svc/faults) shaped this attempt" },
    ),
  ),
  traceId: Opt(Type.String({ description: "svcd only: the message's OpenTelemetry trace id, while tracing is on" })),
});

const Cursor = Opt(Type.String({ description: "more entries: ask again with this cursor" }));

export const DlqPageJson = Type.Object({ cursor: Cursor, messages: Type.Array(DlqMessageJson) });
export const EventsPageJson = Type.Object({ cursor: Cursor, events: Type.Array(LogEventJson) });
export const LogsPageJson = Type.Object({ cursor: Cursor, logs: Type.Array(LogEventJson), events: Type.Array(LogEventJson) });
export const DeletedJson = Type.Object({ deleted: Type.Integer(), cursor: Cursor });
export const RetriedJson = Type.Object({
  cursor: Type.String({ description: "empty when nothing more matches" }),
  responses: Type.Array(Type.Object({ messageId: Type.String() })),
});
export const NewMessageJson = Type.Object({ messageId: Type.String() });

export const SigningKeysJson = Type.Object({ current: Type.String(), next: Type.String() });

export const BatchAnswerJson = Type.Array(
  Type.Union([PublishedJson, Type.Array(PublishedJson), Type.Object({ error: Type.String() })]),
  { description: "one answer per element, in order: the message, a URL Group's messages, or why it was refused" },
);

export const UrlGroupJson = Type.Object({
  name: Type.String(),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
  endpoints: Type.Array(Type.Object({ name: Opt(Type.String()), url: Type.String() })),
  headers: Opt(HeaderMapJson),
});

export const QueueJson = Type.Object({
  name: Type.String(),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
  parallelism: Type.Integer(),
  paused: Type.Boolean(),
  lag: Type.Integer({ description: "messages waiting in the queue" }),
});

export const ScheduleJson = Type.Object({
  scheduleId: Type.String(),
  cron: Type.String(),
  destination: Type.String(),
  createdAt: Type.Integer(),
  method: Type.String(),
  isPaused: Type.Boolean(),
  header: Opt(HeaderMapJson),
  body: Opt(Type.String()),
  bodyBase64: Opt(Type.String()),
  retries: Type.Integer(),
  delay: Opt(Type.Integer({ description: "seconds" })),
  callback: Opt(Type.String()),
  failureCallback: Opt(Type.String()),
  callerIp: Opt(Type.String()),
  queueName: Opt(Type.String()),
  flowControlKey: Opt(Type.String()),
  parallelism: Opt(Type.Integer()),
  rate: Opt(Type.Integer()),
  period: Opt(Type.Integer()),
  retryDelayExpression: Opt(Type.String()),
  label: Opt(Type.String()),
  labels: Opt(Type.Array(Type.String())),
  lastScheduleTime: Opt(Type.Integer()),
  nextScheduleTime: Opt(Type.Integer()),
  lastScheduleStates: Opt(Type.Record(Type.String(), Type.String(), { description: "message id → IN_PROGRESS, SUCCESS or FAIL" })),
});

export const ScheduleCreatedJson = Type.Object({ scheduleId: Type.String() });

export const FlowControlJson = Type.Object({
  flowControlKey: Type.String(),
  waitListSize: Type.Integer(),
  parallelismMax: Type.Integer(),
  parallelismCount: Type.Integer(),
  rateMax: Type.Integer(),
  rateCount: Type.Integer(),
  ratePeriod: Type.Integer({ description: "seconds" }),
  ratePeriodStart: Type.Integer({ description: "Unix seconds" }),
  isPaused: Type.Boolean(),
  isPinnedParallelism: Type.Boolean(),
  isPinnedRate: Type.Boolean(),
});

export const GlobalParallelismJson = Type.Object({ parallelismMax: Type.Integer(), parallelismCount: Type.Integer() });

/** An action's answer: 200 and no body. */
export const EMPTY_OK = { description: "done (no body)" };
