import { Type } from "@sinclair/typebox";

/**
 * Schemas of the JSON the stores keep in text columns, checked when a row is read back
 * (store/json-column.ts). They say what readers rely on; fields they leave out are allowed.
 */

/** `[name, value]` pairs, in order: headers as stored. */
export const HeaderPairs = Type.Array(Type.Tuple([Type.String(), Type.String()]));

export const FlowControlJson = Type.Object({
  key: Type.String(),
  rate: Type.Optional(Type.Number()),
  periodMs: Type.Number(),
  parallelism: Type.Optional(Type.Number()),
});

/** A message's (or a callback's) mark as part of a workflow run. */
export const WorkflowTagJson = Type.Object({
  runId: Type.String(),
  callType: Type.Union([Type.Literal("step"), Type.Literal("toCallback"), Type.Literal("fromCallback"), Type.Literal("failureCall")]),
  init: Type.Optional(Type.Boolean()),
});

const callbackFields = {
  url: Type.String(),
  method: Type.String(),
  headers: HeaderPairs,
  timeoutMs: Type.Optional(Type.Number()),
  retries: Type.Optional(Type.Number()),
  delayMs: Type.Optional(Type.Number()),
  retryDelayExpr: Type.Optional(Type.String()),
  flow: Type.Optional(FlowControlJson),
  workflow: Type.Optional(WorkflowTagJson),
};

/** How a callback is published; a workflow call's answer also carries its run's flow control, failure callback and mark. */
export const CallbackSpecJson = Type.Object({ ...callbackFields, failureCallback: Type.Optional(Type.Object(callbackFields)) });

/** The `extra` column of a message: its settings that no query filters on. */
export const RedactSpecJson = Type.Object({
  body: Type.Optional(Type.Boolean()),
  allHeaders: Type.Optional(Type.Boolean()),
  headers: Type.Optional(Type.Array(Type.String())),
});

/** A message's place in a distributed trace (model/trace.ts). */
export const TraceContextJson = Type.Object({
  span: Type.String(),
  parentId: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
});

export const MessageExtraJson = Type.Object({
  timeoutMs: Type.Number(),
  retryDelayExpr: Type.Optional(Type.String()),
  endpointName: Type.Optional(Type.String()),
  flow: Type.Optional(FlowControlJson),
  callback: Type.Optional(CallbackSpecJson),
  failureCallback: Type.Optional(CallbackSpecJson),
  callbackOnce: Type.Optional(Type.Boolean()),
  workflow: Type.Optional(WorkflowTagJson),
  redact: Type.Optional(RedactSpecJson),
  trace: Type.Optional(TraceContextJson),
});

/** A DLQ entry's snapshot of its message: the message row without its body. */
export const MessageSnapshotJson = Type.Object({
  id: Type.String(),
  account_id: Type.String(),
  kind: Type.String(),
  state: Type.String(),
  url: Type.String(),
  method: Type.String(),
  headers: Type.String(),
  extra: Type.String(),
  created_at: Type.Number(),
  not_before: Type.Number(),
  retried: Type.Number(),
  max_retries: Type.Number(),
});
