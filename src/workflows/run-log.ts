import { compact } from "../messages/views.ts";
import { labelFields } from "../model/labels.ts";
import { fromBase64 } from "../util/base64.ts";
import type { RunRecord, StepDeliveryState, StepEntry, StepError, StepIdentity, Waiter } from "./model.ts";
import { isPlanStep, parseStep, textOf, type ParsedStep } from "./raw-steps.ts";
import {
  callLog,
  callRequestFields,
  failingStepName,
  identity,
  initLog,
  invokedFields,
  invokingLog,
  NEXT_STATE,
  outText,
  parseJson,
  replaceContents,
  SHOWN_STATE,
  stepBase,
  waitingLog,
  type Call,
  type InvokedRun,
  type StepLog,
} from "./step-logs.ts";
import { redactStepGroups } from "./redact-log.ts";
import { traceIdOf } from "../model/trace.ts";

export type StepLogGroup =
  | { type: "sequential"; steps: [StepLog] }
  | { type: "parallel"; steps: StepLog[] }
  | { type: "next"; steps: StepLog[] };

/** What a run's log shows beyond its list: why attempts failed, waits under way, runs it invoked. */
export interface RunLogFacts {
  /** Failed attempts by message id, oldest first. */
  errors: Map<string, StepError[]>;
  waiting: Waiter[];
  invoked: InvokedRun[];
}

/**
 * Builds the run as `client.logs()` returns it (the SDK's `WorkflowRunLog`): the initial payload
 * and each step in order (parallel branches together), then the messages not yet delivered as
 * the `next` group (pending, retrying with their errors, failed or cancelled), with the run's
 * ending. Steps under way show too, in their place: a parallel branch announced by its plan step,
 * a `context.call` on its way (`callType` `toCallback`, then `fromCallback` with the answer), a
 * wait for an event, an invoked run; a finished step takes their place.
 */
class RunLogBuilder {
  readonly groups: StepLogGroup[] = [];
  private readonly next: StepLog[] = [];
  private parallel: { group: StepLogGroup; concurrent: number } | null = null;
  /** Steps shown while under way, by step id: a finished step replaces them. */
  private readonly open = new Map<number, StepLog>();
  private readonly done = new Set<number>();
  private readonly calls = new Map<string, Call>();
  private lastCall: Call | undefined;

  /**
   * `ended`: the run has ended. Its deliveries still under way are then the ones that ended it
   * (the SDK ends a run from inside its last delivery; an ended run's waiting messages are
   * cancelled): they show in their place but not in `next`, so an ended run never lists steps
   * still to come while their answers are on their way.
   */
  constructor(
    private readonly facts: RunLogFacts,
    private readonly ended: boolean,
  ) {}

  add(e: StepEntry): void {
    const step = e.position > 0 && e.callType === "step" ? parseStep(e.body) : undefined;
    if (e.position === 0) this.place(initLog(e), 1);
    else if (e.callType === "toCallback") this.callRequest(e);
    else if (e.callType === "fromCallback") this.callAnswer(e);
    else if (step && isPlanStep(step)) this.planned(e, step);
    else if (step) this.finished(e, step);
    if (e.state !== "DELIVERED" && !(this.ended && e.state === "PENDING")) this.next.push(this.nextLog(e, step));
  }

  /** Waits and invoked runs under way, after the list. */
  addUnderWay(): void {
    for (const w of this.facts.waiting) {
      const id = identity(w.step);
      if (id) this.show(id, waitingLog(w, id));
    }
    for (const invoked of this.facts.invoked) {
      const id = identity(invoked.step);
      if (id) this.show(id, invokingLog(invoked, id));
    }
  }

  finish(): StepLogGroup[] {
    if (this.next.length > 0) this.groups.push({ type: "next", steps: this.next });
    return this.groups;
  }

  private place(log: StepLog, concurrent: number): void {
    if (concurrent <= 1) {
      this.parallel = null;
      this.groups.push({ type: "sequential", steps: [log] });
      return;
    }
    const current = this.parallel;
    if (!current || current.concurrent !== concurrent || current.group.steps.length >= concurrent) {
      this.parallel = { group: { type: "parallel", steps: [] }, concurrent };
      this.groups.push(this.parallel.group);
    }
    this.parallel!.group.steps.push(log);
  }

  /** A step under way: in the place its plan step took, or in order. */
  private show(id: StepIdentity, log: StepLog): void {
    if (this.done.has(id.stepId)) return;
    const shown = this.open.get(id.stepId);
    if (shown) return replaceContents(shown, log);
    this.place(log, id.concurrent);
    this.open.set(id.stepId, log);
  }

  private planned(e: StepEntry, plan: ParsedStep): void {
    const id = { stepId: plan.targetStep!, stepName: plan.stepName, stepType: plan.stepType, concurrent: plan.concurrent };
    if (this.open.has(id.stepId)) return;
    this.show(id, stepBase(e, id, SHOWN_STATE[e.state]));
  }

  private finished(e: StepEntry, step: ParsedStep): void {
    // A step delivered twice may have published its result twice: the first one counts.
    if (this.done.has(step.stepId)) return;
    const log = this.resultLog(e, step);
    this.done.add(step.stepId);
    const shown = this.open.get(step.stepId);
    this.open.delete(step.stepId);
    if (shown) replaceContents(shown, log);
    else this.place(log, step.concurrent);
  }

  private callRequest(e: StepEntry): void {
    const call: Call = { request: e, step: e.details?.step };
    this.calls.set(e.messageId, call);
    this.lastCall = call;
    if (call.step) this.show(call.step, callLog(call, call.step));
  }

  private callAnswer(e: StepEntry): void {
    const source = (parseJson(textOf(e.body)) as { sourceMessageId?: unknown } | undefined)?.sourceMessageId;
    const call = typeof source === "string" ? this.calls.get(source) : undefined;
    if (!call) return;
    call.answer = e;
    if (call.step) this.show(call.step, callLog(call, call.step));
  }

  /** A finished step: its result as the SDK stored it, and its kind's own fields. */
  private resultLog(e: StepEntry, step: ParsedStep): StepLog {
    const log = stepBase(e, step, "STEP_SUCCESS");
    const out = outText(step.out);
    if (out !== undefined) log.out = out;
    if (step.sleepFor !== undefined) log.sleepFor = step.sleepFor;
    if (step.sleepUntil !== undefined) log.sleepUntil = step.sleepUntil;
    if (typeof step.waitEventId === "string") {
      // The event's data, as it was notified (the step carries it in base64).
      if (out !== undefined) log.out = textOf(fromBase64(out));
      Object.assign(log, compact({
        waitEventId: step.waitEventId,
        waitTimeout: step.waitTimeout === true,
        waitTimeoutDuration: typeof step.timeout === "string" ? step.timeout : undefined,
        waitTimeoutDeadline: e.details?.waitTimeoutDeadline,
      }));
    }
    if (step.stepType === "Call") {
      const call = [...this.calls.values()].find((c) => c.step?.stepId === step.stepId) ?? (this.lastCall?.step ? undefined : this.lastCall);
      if (call) Object.assign(log, callRequestFields(call.request));
      const response = out === undefined ? undefined : (parseJson(out) as { status?: number; body?: unknown; header?: Record<string, string[]> } | undefined);
      if (response && typeof response === "object") {
        Object.assign(log, {
          callResponseStatus: response.status,
          callResponseBody: outText(response.body),
          callResponseHeaders: response.header ?? {},
        });
      }
    }
    if (step.stepType === "Invoke") {
      const invoked = this.facts.invoked.find((r) => identity(r.step)?.stepId === step.stepId);
      if (invoked) Object.assign(log, invokedFields(invoked));
    }
    return log;
  }

  /** An undelivered message, naming the step its delivery runs where that is known. */
  private nextLog(e: StepEntry, step: ParsedStep | undefined): StepLog {
    const errors = this.facts.errors.get(e.messageId);
    return compact({
      messageId: e.messageId,
      stepName: this.pendingStepName(e, step) ?? failingStepName(errors),
      state: NEXT_STATE[e.state as Exclude<StepDeliveryState, "DELIVERED">],
      retries: e.retries,
      retryDelay: e.retryDelayExpr,
      nextDeliveryTime: e.state === "RETRY" ? e.nextDeliveryAt : undefined,
      errors: errors?.length ? errors : undefined,
    });
  }

  private pendingStepName(e: StepEntry, step: ParsedStep | undefined): string | undefined {
    if (step && isPlanStep(step)) return step.stepName;
    if (e.callType === "toCallback") return e.details?.step?.stepName;
    if (e.callType === "fromCallback") return [...this.calls.values()].find((c) => c.answer === e)?.step?.stepName;
    return undefined;
  }
}

/** The run as `client.logs()` returns it (the SDK's `WorkflowRunLog`, with the hosted API's extra run fields). */
export function runLog(run: RunRecord, entries: StepEntry[], facts: RunLogFacts) {
  const builder = new RunLogBuilder(facts, run.state !== "RUN_STARTED");
  for (const e of entries) builder.add(e);
  builder.addUnderWay();
  const failure = run.failureFunction;
  return compact({
    workflowRunId: run.runId,
    workflowUrl: run.url,
    workflowState: run.state,
    workflowRunCreatedAt: run.createdAt,
    workflowRunCompletedAt: run.completedAt,
    workflowRunCallerIp: run.callerIp,
    flowControlKey: run.config.flow?.key,
    failureFunction: failure
      ? compact({ ...failure, errors: facts.errors.get(failure.messageId) })
      : undefined,
    steps: redactStepGroups(builder.finish(), run.config.redact),
    workflowRunResponse: run.result,
    invoker: run.invoker
      ? {
          workflowRunId: run.invoker.workflowRunId,
          workflowUrl: run.invoker.workflowUrl,
          workflowRunCreatedAt: run.invoker.workflowRunCreatedAt,
        }
      : undefined,
    rerunOf: run.rerunOf,
    dlqId: run.dlqId,
    ...labelFields(run.labels),
    traceId: run.trace && traceIdOf(run.trace),
  });
}

export type WorkflowRunLog = ReturnType<typeof runLog>;
