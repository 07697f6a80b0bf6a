import type { Dialect } from "../core/dialect.ts";
import { badRequest, HttpError } from "../core/errors.ts";
import { ConfigSource } from "../messages/config-source.ts";
import type { PublishOptions } from "../messages/options.ts";
import type { PublishInput } from "../messages/publish.ts";
import { WorkflowMetric, type UsageRecorder } from "../metrics/usage.ts";
import type { MessageRecord } from "../model/message.ts";
import { isSampled, newSpanId, reparent, traceIdOf, traceparent, type TraceContext } from "../model/trace.ts";
import type { WriteTx } from "../store/transactor.ts";
import { joinRun, failureCallbackOf, mergeHeaders, runHeaders, withoutHeaders } from "./headers.ts";
import type { CallType, Invoker, RunConfig, RunRecord } from "./model.ts";
import { readWorkflowPublish, stepIdentityOf, workflowHeaders, type WorkflowHeaderNames, type WorkflowPublish } from "./protocol.ts";
import { isActive } from "./run-state.ts";
import { bytesOf, textOf } from "./raw-steps.ts";
import type { RunStorage } from "./storage.ts";

/** The run is over (or never was): the SDK reads a 400 as "stop quietly, nothing to do". */
export const runOver = (message: string) => new HttpError(400, message);

/**
 * Publishes that belong to a workflow run (they carry `<Prefix>-Workflow-RunId`), seen inside the
 * write that stores them: a trigger starts its run (a second trigger of the same id is a
 * duplicate), a step joins its run's list and inherits the trigger's settings, a `context.call`
 * arranges for its answer to come back as part of the run. Steps of a run that is over are
 * refused with 400.
 */
export class WorkflowPublishes {
  private readonly names: WorkflowHeaderNames;

  constructor(
    private readonly runs: RunStorage,
    private readonly dialect: Dialect,
    private readonly usage: UsageRecorder,
  ) {
    this.names = workflowHeaders(dialect);
  }

  /** Whether a publish belongs to a run: its refusals are then the whole request's answer. */
  readonly isWorkflow = (headers: Headers): boolean => headers.has(this.names.runId);

  /**
   * Runs inside the storing write `tx`: per message, the id of the message it duplicates, if any.
   * A publish of no run is answered at once, with one promise made once: every publish asks.
   */
  readonly admit = (
    tx: WriteTx,
    input: PublishInput,
    messages: MessageRecord[],
    _options: PublishOptions,
    nowMs: number,
  ): Promise<Array<string | undefined> | undefined> => {
    const wf = readWorkflowPublish(this.names, input.headers);
    return wf ? this.admitToRun(tx, wf, input, messages, nowMs) : NOT_A_RUN;
  };

  private async admitToRun(
    tx: WriteTx,
    wf: WorkflowPublish,
    input: PublishInput,
    messages: MessageRecord[],
    nowMs: number,
  ): Promise<Array<string | undefined>> {
    if (messages.length !== 1) throw badRequest(`a workflow message goes to one URL, not to a URL Group`);
    const m = messages[0]!;
    const src = new ConfigSource(this.dialect, input.headers, input.query);
    const given = (suffix: string) => src.get(suffix) !== undefined;
    if (wf.init) return [await this.start(tx, input, m, wf, nowMs)];
    const run = await this.activeRun(tx, input.account.id, wf.runId);
    if (wf.callType === "toCallback") await this.call(tx, run, m, given, nowMs);
    else await this.step(tx, run, m, wf.callType, given, nowMs);
    return [undefined];
  }

  private async activeRun(tx: WriteTx, accountId: string, runId: string): Promise<RunRecord> {
    const run = await this.runs.getRun(tx, accountId, runId);
    if (!run) throw runOver(`workflow run ${runId} does not exist`);
    if (!isActive(run.state)) throw runOver(`workflow run ${runId} is over (${run.state})`);
    return run;
  }

  /** A trigger (or an invoke's start): the run begins with the message's payload as its first entry. */
  private async start(
    tx: WriteTx,
    input: PublishInput,
    m: MessageRecord,
    wf: WorkflowPublish,
    nowMs: number,
  ): Promise<string | undefined> {
    const accountId = input.account.id;
    let invoker: Invoker | undefined;
    if (wf.invoke) ({ payload: m.body, invoker } = readInvoke(m.body));
    const existing = await this.runs.getRun(tx, accountId, wf.runId);
    const adopting = existing?.awaitingSdk && wf.triggerBySdk;
    if (existing && !adopting) {
      // A second trigger of the run: it answers with the first one's message.
      const first = await this.runs.firstStep(tx, accountId, wf.runId);
      if (!first) throw runOver(`workflow run ${wf.runId} exists already`);
      return first.messageId;
    }

    const config: RunConfig = adopting
      ? this.adopt(existing, m)
      : {
          retries: m.maxRetries,
          retryDelayExpr: m.retryDelayExpr,
          flow: m.flow,
          failureCallback: m.failureCallback,
          headers: m.headers,
          redact: m.redact,
        };
    const run: RunRecord = {
      ...(existing ?? { accountId, runId: wf.runId, createdAt: nowMs, state: "RUN_STARTED" as const, callerIp: input.callerIp }),
      url: wf.url ?? m.url,
      labels: adopting ? (existing.labels ?? m.labels) : m.labels,
      config,
      invoker: invoker ?? existing?.invoker,
      // Started for a caller without the SDK: the endpoint's SDK triggers it again, with the same id.
      awaitingSdk: !existing && m.headers.some(([name]) => name.toLowerCase() === this.names.unknownSdk.toLowerCase()),
      restTriggered: existing?.restTriggered || input.restTrigger || undefined,
      trace: existing?.trace ?? (m.trace && runSpanOf(m.trace)),
    };
    // The trigger's message is the run's first child.
    if (run.trace && m.trace) m.trace = reparent(m.trace, run.trace);
    const entry = this.entryOf(run, m, "step", nowMs);
    if (existing) {
      await this.runs.saveRun(tx, run);
      await this.runs.retagStep(tx, { ...entry, position: 0 });
    } else {
      await this.runs.insertRun(tx, run);
      await this.runs.appendStep(tx, entry);
      this.usage.countStored(tx, accountId, WorkflowMetric.runStarted, 1, nowMs);
    }
    this.join(tx, run, m, "step", true);
    return undefined;
  }

  /**
   * The endpoint's SDK takes over a run started by `POST /v2/trigger`: its own trigger carries none
   * of the REST trigger's settings (retries, retry delay, flow control, failure callback), so those
   * stay the run's, and of the headers it forwards, the ones the delivery to it added (signature,
   * message id, `Host`, `Content-Length`, ...) do not join the run.
   */
  private adopt(existing: RunRecord, m: MessageRecord): RunConfig {
    const c = existing.config;
    const original = withoutHeaders(c.headers, [this.names.unknownSdk]);
    const given = new Set(original.map(([name]) => name.toLowerCase()));
    const prefix = this.dialect.lowerPrefix;
    const added = (name: string) => {
      const lower = name.toLowerCase();
      if (given.has(lower)) return false;
      if (lower.startsWith(prefix)) return !lower.startsWith(`${prefix}workflow-`);
      return DELIVERY_HEADERS.has(lower);
    };
    m.headers = mergeHeaders(original, m.headers.filter(([name]) => !added(name)));
    m.maxRetries = c.retries;
    m.retryDelayExpr = c.retryDelayExpr;
    m.flow = c.flow;
    m.failureCallback = c.failureCallback;
    m.redact = c.redact;
    return { ...c, headers: m.headers };
  }

  /** A step result, plan step or event: inherits what the trigger set unless it sets it itself. */
  private async step(
    tx: WriteTx,
    run: RunRecord,
    m: MessageRecord,
    callType: CallType,
    given: (suffix: string) => boolean,
    nowMs: number,
  ): Promise<void> {
    const c = run.config;
    if (!given("Retries")) m.maxRetries = c.retries;
    if (!given("Retry-Delay")) m.retryDelayExpr = c.retryDelayExpr;
    if (!given("Flow-Control-Key")) m.flow = c.flow;
    if (!given("Failure-Callback")) m.failureCallback = c.failureCallback;
    if (!given("Redact-Fields")) m.redact = c.redact;
    m.headers = mergeHeaders(c.headers, m.headers);
    if (run.trace) m.trace = joinRunTrace(m.trace, run.trace);
    await this.runs.appendStep(tx, this.entryOf(run, m, callType, nowMs));
    this.join(tx, run, m, callType, false);
  }

  /**
   * `context.call`: the request goes to the third party as it is; its answer comes back to the
   * workflow once, as the run's next message, with the run's settings and the user's headers.
   */
  private async call(
    tx: WriteTx,
    run: RunRecord,
    m: MessageRecord,
    given: (suffix: string) => boolean,
    nowMs: number,
  ): Promise<void> {
    const c = run.config;
    const step = m.callback && stepIdentityOf(this.names, m.callback.headers);
    await this.runs.appendStep(tx, { ...this.entryOf(run, m, "toCallback", nowMs), details: step && { step } });
    this.usage.countStored(tx, run.accountId, WorkflowMetric.messages, 1, nowMs);
    m.workflow = { runId: run.runId, callType: "toCallback" };
    m.callbackOnce = true;
    if (run.trace) m.trace = joinRunTrace(m.trace, run.trace);
    if (!given("Redact-Fields")) m.redact = c.redact;
    if (!m.callback) return;
    m.callback = {
      ...m.callback,
      headers: [...mergeHeaders(this.userHeaders(c), m.callback.headers), ...runHeaders(this.names, run)],
      retries: given("Callback-Retries") ? m.callback.retries : c.retries,
      retryDelayExpr: given("Callback-Retry-Delay") ? m.callback.retryDelayExpr : c.retryDelayExpr,
      flow: c.flow,
      failureCallback: c.failureCallback && failureCallbackOf(this.names, run, c.failureCallback),
      workflow: { runId: run.runId, callType: "fromCallback" },
    };
  }

  private join(tx: WriteTx, run: RunRecord, m: MessageRecord, callType: CallType, init: boolean): void {
    joinRun(this.names, run, m, callType, init);
    this.usage.countStored(tx, run.accountId, WorkflowMetric.messages, 1, m.createdAt);
  }

  /** The user's headers of the trigger, without what marks a delivery as a step (callbacks must not look like steps). */
  private userHeaders(c: RunConfig) {
    return withoutHeaders(c.headers, ["content-type", this.names.sdkVersion]);
  }

  private entryOf(run: RunRecord, m: MessageRecord, callType: CallType, nowMs: number) {
    return {
      accountId: run.accountId,
      runId: run.runId,
      messageId: m.id,
      callType,
      url: m.url,
      method: m.method,
      body: m.body,
      createdAt: nowMs,
      headers: m.headers,
      retries: m.maxRetries,
      retryDelayExpr: m.retryDelayExpr,
    };
  }
}

const NOT_A_RUN: Promise<undefined> = Promise.resolve(undefined);

/** What an HTTP client adds to a delivery (besides the dialect's own headers): never a user's header of the run. */
const DELIVERY_HEADERS = new Set(["host", "content-length", "connection", "accept", "accept-encoding", "user-agent", "transfer-encoding"]);

/** The body of an invoke: the invoked run's payload and who waits for its result. */
function readInvoke(body: Uint8Array): { payload: Uint8Array; invoker: Invoker } {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(textOf(body));
  } catch {
    throw badRequest("invalid workflow invoke body: not JSON");
  }
  const { workflowRunId, workflowUrl, workflowRunCreatedAt, headers, step } = value ?? {};
  if (typeof workflowRunId !== "string" || typeof workflowUrl !== "string" || typeof step !== "object" || step === null)
    throw badRequest("invalid workflow invoke body: needs workflowRunId, workflowUrl and step");
  const inner = value.body;
  return {
    payload: bytesOf(typeof inner === "string" ? inner : inner === undefined || inner === null ? "" : JSON.stringify(inner)),
    invoker: {
      workflowRunId,
      workflowUrl,
      workflowRunCreatedAt: Number(workflowRunCreatedAt) || 0,
      headers: (typeof headers === "object" && headers !== null ? headers : {}) as Record<string, string[]>,
      step: step as Record<string, unknown>,
    },
  };
}

/** A new run's span: in the trace its trigger continues (or starts), the trigger's parent its parent. */
function runSpanOf(trigger: TraceContext): TraceContext {
  return { span: traceparent(traceIdOf(trigger), newSpanId(), isSampled(trigger)), parentId: trigger.parentId, state: trigger.state };
}

/**
 * A message of a run joins the run's span, unless its publish continued a trace of its own (the
 * endpoint's instrumented client already links it to the delivery that ran the step).
 */
function joinRunTrace(t: TraceContext | undefined, run: TraceContext): TraceContext | undefined {
  return t && !t.parentId ? reparent(t, run) : t;
}
