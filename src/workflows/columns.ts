import { Type } from "@sinclair/typebox";
import { CallbackSpecJson, FlowControlJson, HeaderPairs, RedactSpecJson, TraceContextJson } from "../model/columns.ts";
import { FAILURE_CALLBACK_STATES } from "../model/message.ts";

/** Schemas of the workflow tables' JSON columns, checked when a row is read back (store/json-column.ts). */

const HeaderMap = Type.Record(Type.String(), Type.Array(Type.String()));
const FailureState = Type.Union(FAILURE_CALLBACK_STATES.map((state) => Type.Literal(state)));

/** `workflow_runs.data`: the trigger's settings, the invoker, the failure function, the run a rerun came from. */
export const RunDataJson = Type.Object({
  config: Type.Object({
    retries: Type.Number(),
    retryDelayExpr: Type.Optional(Type.String()),
    flow: Type.Optional(FlowControlJson),
    failureCallback: Type.Optional(CallbackSpecJson),
    headers: HeaderPairs,
    redact: Type.Optional(RedactSpecJson),
  }),
  invoker: Type.Optional(
    Type.Object({
      workflowRunId: Type.String(),
      workflowUrl: Type.String(),
      workflowRunCreatedAt: Type.Number(),
      headers: HeaderMap,
      step: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
  failureFunction: Type.Optional(
    Type.Object({
      messageId: Type.String(),
      url: Type.String(),
      state: FailureState,
      dlqId: Type.String(),
      failStatus: Type.Number(),
      failResponse: Type.String(),
      failHeaders: HeaderMap,
      responseStatus: Type.Optional(Type.Number()),
      responseBody: Type.Optional(Type.String()),
      responseHeaders: Type.Optional(HeaderMap),
      nextDeliveryTime: Type.Optional(Type.Number()),
    }),
  ),
  awaitingSdk: Type.Optional(Type.Boolean()),
  rerunOf: Type.Optional(
    Type.Object({
      workflowRunId: Type.String(),
      workflowRunCreatedAt: Type.Number(),
      stepName: Type.Optional(Type.String()),
      stepId: Type.Optional(Type.Number()),
    }),
  ),
  restTriggered: Type.Optional(Type.Boolean()),
  trace: Type.Optional(TraceContextJson),
});

/** `workflow_waiters.data`: where the event goes and what the waiting step was. */
export const WaiterDataJson = Type.Object({
  url: Type.String(),
  headers: HeaderPairs,
  timeoutUrl: Type.String(),
  timeoutBody: Type.Optional(Type.String()),
  timeoutHeaders: HeaderMap,
  timeout: Type.String(),
  step: Type.Record(Type.String(), Type.Unknown()),
});

/** `workflow_steps.details`: what only the run's log needs of an entry. */
export const StepDetailsJson = Type.Object({
  step: Type.Optional(
    Type.Object({ stepId: Type.Number(), stepName: Type.String(), stepType: Type.String(), concurrent: Type.Number() }),
  ),
  waitTimeoutDeadline: Type.Optional(Type.Number()),
});

/** `workflow_step_errors.headers`: the failed answer's headers. */
export const ErrorHeadersJson = HeaderMap;
