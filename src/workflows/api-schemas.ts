import { Type } from "@sinclair/typebox";
import { DlqMessageJson, HeaderMapJson } from "../messages/api-schemas.ts";
import { FAILURE_CALLBACK_STATES } from "../model/message.ts";
import { RUN_STATES, STEP_STATES } from "./model.ts";

/**
 * The answers of the workflow routes, as the OpenAPI document shows them (run-log.ts, step-logs.ts, raw-steps.ts,
 * waits.ts, trigger.ts and dlq.ts build them). Fields a step carries as the SDK sent it are shown
 * with the types the SDK sends.
 */

const Opt = Type.Optional;
const oneOf = (values: readonly string[], description?: string) => Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {});
const UnixMs = (description = "Unix ms") => Type.Integer({ description });

/** One failed attempt of a run's message (the SDK's `StepError`). */
const StepErrorJson = Type.Object({
  error: Type.String(),
  body: Type.String(),
  headers: HeaderMapJson,
  status: Type.Integer({ description: "0 when no answer came" }),
  time: UnixMs(),
});

/**
 * A step of a run's log: a finished step, one under way (a plan step's branch, a `context.call`,
 * a wait, an invoked run) or, in the `next` group, a message not yet delivered.
 */
const StepLogJson = Type.Object({
  state: oneOf(STEP_STATES),
  stepId: Opt(Type.Number()),
  stepName: Opt(Type.String()),
  stepType: Opt(Type.String({ description: "Initial, Run, SleepFor, SleepUntil, Call, Wait, Invoke, ..." })),
  callType: Opt(oneOf(["step", "toCallback", "fromCallback"])),
  messageId: Opt(Type.String()),
  concurrent: Opt(Type.Number({ description: "branches of its parallel group (1: sequential)" })),
  createdAt: Opt(UnixMs()),
  headers: Opt(HeaderMapJson),
  retries: Opt(Type.Integer()),
  retryDelay: Opt(Type.String()),
  out: Opt(Type.String({ description: "the step's result as text (JSON text for most steps); the initial payload for the first" })),
  sleepFor: Opt(Type.Union([Type.Number(), Type.String()], { description: "seconds, or a duration such as `10s`" })),
  sleepUntil: Opt(Type.Number({ description: "Unix seconds" })),
  waitEventId: Opt(Type.String()),
  waitTimeout: Opt(Type.Boolean({ description: "the wait ended by its timeout, not by the event" })),
  waitTimeoutDuration: Opt(Type.String()),
  waitTimeoutDeadline: Opt(UnixMs()),
  callUrl: Opt(Type.String()),
  callMethod: Opt(Type.String()),
  callHeaders: Opt(HeaderMapJson),
  callBody: Opt(Type.String()),
  callResponseStatus: Opt(Type.Number()),
  callResponseBody: Opt(Type.String()),
  callResponseHeaders: Opt(HeaderMapJson),
  invokedWorkflowRunId: Opt(Type.String()),
  invokedWorkflowUrl: Opt(Type.String()),
  invokedWorkflowCreatedAt: Opt(UnixMs()),
  invokedWorkflowRunBody: Opt(Type.String()),
  invokedWorkflowRunHeaders: Opt(HeaderMapJson),
  nextDeliveryTime: Opt(UnixMs("a retrying message's next attempt, Unix ms")),
  errors: Opt(Type.Array(StepErrorJson, { description: "its failed attempts, oldest first" })),
});

const StepGroupJson = Type.Object({
  type: oneOf(["sequential", "parallel", "next"], "`next`: the messages not yet delivered, last"),
  steps: Type.Array(StepLogJson),
});

const FailureFunctionJson = Type.Object({
  messageId: Type.String(),
  url: Type.String(),
  state: oneOf(FAILURE_CALLBACK_STATES),
  dlqId: Type.String(),
  failStatus: Type.Integer({ description: "the status the failed step was answered" }),
  failResponse: Type.String(),
  failHeaders: HeaderMapJson,
  responseStatus: Opt(Type.Integer()),
  responseBody: Opt(Type.String()),
  responseHeaders: Opt(HeaderMapJson),
  nextDeliveryTime: Opt(UnixMs()),
  errors: Opt(Type.Array(StepErrorJson)),
});

/** A run as `client.logs()` reads it (the SDK's `WorkflowRunLog`). */
export const WorkflowRunLogJson = Type.Object({
  workflowRunId: Type.String(),
  workflowUrl: Type.String(),
  workflowState: oneOf(RUN_STATES),
  workflowRunCreatedAt: UnixMs(),
  workflowRunCompletedAt: Opt(UnixMs()),
  workflowRunCallerIp: Opt(Type.String()),
  flowControlKey: Opt(Type.String()),
  failureFunction: Opt(FailureFunctionJson),
  steps: Type.Array(StepGroupJson),
  workflowRunResponse: Opt(Type.String({ description: "the route function's return value as JSON text" })),
  invoker: Opt(Type.Object({ workflowRunId: Type.String(), workflowUrl: Type.String(), workflowRunCreatedAt: UnixMs() }, { description: "the run that started this one with context.invoke" })),
  rerunOf: Opt(
    Type.Object(
      {
        workflowRunId: Type.String(),
        workflowRunCreatedAt: UnixMs(),
        stepName: Opt(Type.String({ description: "the step it reran from, as the source log names it (`init`: from the start)" })),
        stepId: Opt(Type.Number({ description: "that step's id, where the source run's log shows one" })),
      },
      { description: "a rerun (POST /v2/workflows/runs/{runId}/rerun): the run it reran and the step it reran from" },
    ),
  ),
  dlqId: Opt(Type.String()),
  label: Opt(Type.String({ description: "the first label" })),
  labels: Opt(Type.Array(Type.String())),
  traceId: Opt(Type.String({ description: "svcd only: the run's OpenTelemetry trace id, while tracing is on" })),
});

export const WorkflowLogsJson = Type.Object({
  cursor: Opt(Type.String({ description: "more runs: ask again with this cursor" })),
  runs: Type.Array(WorkflowRunLogJson),
});

/** The SDK's `RawStep` list. */
export const RawStepsJson = Type.Array(
  Type.Object({ messageId: Type.String(), body: Type.String({ description: "base64" }), callType: oneOf(["step", "toCallback", "fromCallback"]) }),
);

/** An action's answer: `{}`. */
export const EmptyJson = Type.Object({}, { additionalProperties: false });

export const RunsCancelledJson = Type.Object({ cancelled: Type.Integer({ description: "runs cancelled by this call (ended ones do not count)" }) });

export const WaiterJson = Type.Object({
  url: Type.String(),
  deadline: Type.Integer({ description: "Unix seconds" }),
  headers: HeaderMapJson,
  timeoutUrl: Type.String(),
  timeoutBody: Opt(Type.String()),
  timeoutHeaders: HeaderMapJson,
});

export const WaitersJson = Type.Array(WaiterJson);

/** One waiter a notification reached (the SDK's `NotifyResponse`). */
export const NotifiedJson = Type.Array(
  Type.Object({
    waiter: WaiterJson,
    messageId: Type.String({ description: "the event's message to the run; empty when it could not be published (see error)" }),
    error: Type.String({ description: "empty when the event was published" }),
    workflowRunId: Type.String(),
    workflowCreatedAt: Opt(UnixMs()),
  }),
  { description: "one per waiter reached; empty when none waits (an event for one run is then kept for its wait)" },
);

export const StartedRunJson = Type.Object({ workflowRunId: Type.String(), workflowCreatedAt: UnixMs() });

export const TriggeredRunJson = Type.Object({
  workflowRunId: Type.String(),
  workflowCreatedAt: UnixMs(),
  deduplicated: Opt(Type.Literal(true, { description: "a run with this id existed already: nothing new was started" })),
});

export const TriggeredRunsJson = Type.Array(TriggeredRunJson, { description: "one per element, in order" });

/** The workflow fields of a failed run's DLQ entry (the SDK's `DLQMessage`). */
const workflowDlqFields = {
  workflowRunId: Type.String(),
  workflowUrl: Type.String(),
  workflowCreatedAt: Opt(UnixMs()),
  failureFunctionState: Opt(oneOf(FAILURE_CALLBACK_STATES)),
  failureCallbackInfo: Opt(
    Type.Object({
      state: oneOf(FAILURE_CALLBACK_STATES),
      responseStatus: Opt(Type.Integer()),
      responseBody: Opt(Type.String()),
      responseHeaders: Opt(HeaderMapJson),
    }),
  ),
};

export const WorkflowDlqMessageJson = Type.Composite([DlqMessageJson, Type.Object(workflowDlqFields)]);

export const WorkflowDlqPageJson = Type.Object({
  cursor: Opt(Type.String({ description: "more entries: ask again with this cursor" })),
  messages: Type.Array(WorkflowDlqMessageJson),
});

export const WorkflowDlqActedJson = Type.Object({
  workflowRuns: Type.Array(StartedRunJson, { description: "the new runs, one per entry acted on" }),
  cursor: Opt(Type.String({ description: "more entries match: call again with this cursor" })),
});
