import { ROOT_CONTEXT, SamplingDecision, SpanKind, SpanStatusCode, trace, type Attributes, type Tracer } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import type { BasicTracerProvider, Sampler } from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "../config/tracing.ts";
import type { Clock } from "../core/clock.ts";
import { withDeadline } from "../core/deadline.ts";
import type { Logger } from "../core/log.ts";
import type { BackgroundService } from "../core/service.ts";
import type { MessageEventMap, MessageEvents } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import {
  childOf,
  isSampled,
  newSpanId,
  newTraceId,
  parseTraceparent,
  spanIdOf,
  traceIdOf,
  traceparent,
  type RunSpan,
  type TraceContext,
  type Tracing,
} from "../model/trace.ts";
import { attemptAttributes, attemptName, creationName, messageAttributes, type AttemptEnd } from "./attributes.ts";
import { ChosenIds, createProvider, samplerOf } from "./provider.ts";

/** W3C: a `tracestate` longer than this may be dropped. */
const MAX_TRACESTATE = 512;
/** The longest a stop waits for the last spans to go out: a collector that is down must not hold it up. */
const FLUSH_AT_STOP_MS = 2_000;

/** An attempt handed to a worker and not yet recorded. */
interface OpenAttempt {
  trace: TraceContext;
  handedAt: number;
  /** When the attempt was due: its message's not-before time, or the time its retry was set for. */
  dueAt?: number;
}

/**
 * Traces of messages over OpenTelemetry (docs/operations.md, Tracing). A message carries its
 * context from its publish on (`MessageRecord.trace`); its spans are made after the commit that
 * stored what they tell, with the ids svcd already passed on, so a rolled-back write leaves no span
 * and nothing here runs inside a write's transaction but the choice of ids.
 */
export class MessageTracing implements Tracing, BackgroundService {
  readonly name = "tracing";
  private readonly ids = new ChosenIds();
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly sampler: Sampler;
  /** By message id: each message has at most one attempt in flight in this process. */
  private readonly attempts = new Map<string, OpenAttempt>();
  /** By message id: when its next attempt is due (known in the process that scheduled the retry). */
  private readonly retryDue = new Map<string, number>();

  constructor(
    config: TracingConfig,
    private readonly clock: Clock,
    log: Logger,
    version: string,
  ) {
    this.provider = createProvider(config, log, version, this.ids);
    this.tracer = this.provider.getTracer("svcd", version);
    this.sampler = samplerOf(config);
  }

  /** Makes the spans of the messages' lifecycle, after each commit. */
  observe(events: MessageEvents): void {
    events.observe("created", (e) => this.created(e));
    events.observe("delivered", (e) => this.ended(e.message, e.outcome, "delivered"));
    events.observe("retried", (e) => {
      this.ended(e.message, e.outcome, "retry", e.error, { "svcd.delivery.next_attempt_at": e.nextDeliveryAt });
      this.retryDue.set(e.message.id, e.nextDeliveryAt);
    });
    events.observe("failed", (e) => this.failed(e));
    events.observe("cancelled", (e) => {
      this.retryDue.delete(e.message.id);
      this.ended(e.message, undefined, "cancelled");
    });
  }

  start(): void {}

  /** Sends what is left, waiting for the collector until the stop's deadline, and at most a moment. */
  async stop(deadline: number): Promise<void> {
    await withDeadline(this.provider.shutdown(), Math.min(FLUSH_AT_STOP_MS, Math.max(0, deadline - Date.now())));
  }

  newMessage(incoming?: Headers): TraceContext {
    const spanId = newSpanId();
    const parent = parseTraceparent(incoming?.get("traceparent"));
    if (!parent) {
      const traceId = newTraceId();
      return { span: traceparent(traceId, spanId, this.samples(traceId)) };
    }
    const rawState = incoming?.get("tracestate")?.trim();
    const state = rawState && rawState.length <= MAX_TRACESTATE ? rawState : undefined;
    const sampled = this.samples(parent.traceId, { spanId: parent.spanId, sampled: parent.sampled });
    return { span: traceparent(parent.traceId, spanId, sampled), parentId: parent.spanId, state };
  }

  attemptStarted(m: MessageRecord, nowMs: number): TraceContext | undefined {
    if (!m.trace) return undefined;
    const t = childOf(m.trace);
    const dueAt = m.retried === 0 ? m.notBefore : this.retryDue.get(m.id);
    this.retryDue.delete(m.id);
    this.attempts.set(m.id, { trace: t, handedAt: nowMs, dueAt });
    return t;
  }

  fromAttempt(source: MessageRecord): TraceContext | undefined {
    const attempt = this.attempts.get(source.id);
    if (attempt) return childOf(attempt.trace);
    return source.trace && childOf(source.trace);
  }

  runEnded(run: RunSpan): void {
    const attributes: Attributes = {
      "messaging.system": "svcd",
      "svcd.workflow.run_id": run.runId,
      "svcd.workflow.state": run.state,
      "url.full": run.url,
    };
    if (run.labels?.length) attributes["svcd.labels"] = run.labels;
    const failed = run.state === "RUN_FAILED";
    this.record("workflow run", SpanKind.INTERNAL, run.trace, run.createdAt, run.completedAt, attributes, failed ? "the run failed" : undefined);
  }

  /** The sampler's decision for a span of `traceId` (a child of `parent` when given), made once, before it is passed on. */
  private samples(traceId: string, parent?: { spanId: string; sampled: boolean }): boolean {
    const context = parent
      ? trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parent.spanId, traceFlags: parent.sampled ? 1 : 0, isRemote: true })
      : ROOT_CONTEXT;
    const { decision } = this.sampler.shouldSample(context, traceId, "publish", SpanKind.PRODUCER, {}, []);
    return decision === SamplingDecision.RECORD_AND_SAMPLED;
  }

  private created({ message: m, atMs }: MessageEventMap["created"]): void {
    if (!m.trace) return;
    const attributes = messageAttributes(m, { type: "create", name: creationName(m) });
    this.record(creationName(m), SpanKind.PRODUCER, m.trace, atMs, this.clock.now(), attributes);
  }

  private failed(e: MessageEventMap["failed"]): void {
    const { message: m } = e;
    this.retryDue.delete(m.id);
    const attempt = this.ended(m, e.outcome, "failed", e.error);
    if (e.dlqId === undefined || !(attempt ?? m.trace)) return;
    const attributes = { ...messageAttributes(m, { type: "settle", name: "dead-letter" }), "svcd.dlq.id": e.dlqId };
    this.record("dead-letter", SpanKind.INTERNAL, childOf((attempt ?? m.trace)!), e.atMs, this.clock.now(), attributes);
  }

  /** The span of the attempt of `m` that ended; its context, if it had one. */
  private ended(
    m: MessageRecord,
    outcome: DeliveryOutcome | undefined,
    end: AttemptEnd,
    error?: string,
    more: Attributes = {},
  ): TraceContext | undefined {
    const attempt = this.attempts.get(m.id);
    if (!attempt) return undefined;
    this.attempts.delete(m.id);
    const finishedAt = outcome ? outcome.startedAt + outcome.durationMs : this.clock.now();
    const attributes = { ...attemptAttributes(m, outcome, attempt, end), ...more };
    const name = attemptName(m);
    this.record(name, SpanKind.CLIENT, attempt.trace, attempt.handedAt, Math.max(finishedAt, attempt.handedAt), attributes, error);
    return attempt.trace;
  }

  /** Makes the span `t` names (only when sampled: an unsampled trace makes no span objects). */
  private record(name: string, kind: SpanKind, t: TraceContext, startMs: number, endMs: number, attributes: Attributes, error?: string): void {
    if (!isSampled(t)) return;
    const traceId = traceIdOf(t);
    const parent = t.parentId
      ? trace.setSpanContext(ROOT_CONTEXT, {
          traceId,
          spanId: t.parentId,
          traceFlags: 1,
          isRemote: true,
          traceState: t.state ? new TraceState(t.state) : undefined,
        })
      : ROOT_CONTEXT;
    this.ids.spanId = spanIdOf(t);
    this.ids.traceId = t.parentId ? undefined : traceId;
    const span = this.tracer.startSpan(name, { kind, startTime: startMs, attributes }, parent);
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    span.end(endMs);
  }
}
