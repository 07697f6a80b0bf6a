import type { MessageRecord } from "./message.ts";

/**
 * Where a message stands in a distributed trace (W3C Trace Context, as OpenTelemetry propagates
 * it), stored with the message (`extra.trace`): it survives restarts and crosses nodes. Only set
 * while tracing is on (docs/operations.md, Tracing).
 */
export interface TraceContext {
  /** `00-<trace id>-<span id>-<flags>`: svcd's span that made the message (its publish, schedule trigger, callback). */
  span: string;
  /** That span's parent span id; absent when the span starts its trace. */
  parentId?: string;
  /** The W3C `tracestate` the trace came with, passed on as is. */
  state?: string;
}

/** A workflow run's span, made when the run ends (the run's `data` keeps its context). */
export interface RunSpan {
  runId: string;
  url: string;
  state: string;
  createdAt: number;
  completedAt: number;
  labels?: string[];
  trace: TraceContext;
}

/**
 * The tracing the server runs (absent when off: every caller checks for it first, so an untraced
 * message costs one branch). Spans themselves are made after the commit that stored what they tell.
 */
export interface Tracing {
  /**
   * The context of a new message: a child of the request's `traceparent` (with its `tracestate`)
   * when `incoming` carries a valid one, else the first span of a new trace, sampled as configured.
   */
  newMessage(incoming?: Headers): TraceContext;
  /** An attempt of `m` is handed to a worker now: the context of svcd's span for it (its `traceparent` goes with the request). */
  attemptStarted(m: MessageRecord, nowMs: number): TraceContext | undefined;
  /** The context of a message the attempt of `source` under way makes (its callback or failure callback). */
  fromAttempt(source: MessageRecord): TraceContext | undefined;
  /** A workflow run ended (after the commit that ended it). */
  runEnded(run: RunSpan): void;
}

export const traceIdOf = (t: TraceContext): string => t.span.slice(3, 35);
export const spanIdOf = (t: TraceContext): string => t.span.slice(36, 52);
export const isSampled = (t: TraceContext): boolean => (parseInt(t.span.slice(53, 55), 16) & 1) === 1;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function randomHex(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  // All zeros is the invalid id: W3C asks for another one.
  if (buf.every((b) => b === 0)) buf[0] = 1;
  let out = "";
  for (const b of buf) out += HEX[b];
  return out;
}

export const newSpanId = (): string => randomHex(8);
export const newTraceId = (): string => randomHex(16);

/** A `traceparent` value of version 00. */
export const traceparent = (traceId: string, spanId: string, sampled: boolean): string =>
  `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;

/** A span in `t`'s trace whose parent is `t`'s span, sampled as `t`'s is. */
export function childOf(t: TraceContext): TraceContext {
  return { span: traceparent(traceIdOf(t), newSpanId(), isSampled(t)), parentId: spanIdOf(t), state: t.state };
}

/** `t` with `parent`'s span as its parent, in `parent`'s trace (a workflow step joins its run). */
export function reparent(t: TraceContext, parent: TraceContext): TraceContext {
  return { span: traceparent(traceIdOf(parent), spanIdOf(t), isSampled(parent)), parentId: spanIdOf(parent), state: parent.state };
}

/**
 * A `traceparent` header as W3C Trace Context reads it: version `00` exactly as specified, a later
 * version by its first four fields; the all-zero ids and version `ff` are invalid.
 */
export function parseTraceparent(value: string | null | undefined): { traceId: string; spanId: string; sampled: boolean } | undefined {
  if (!value) return undefined;
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(value.trim());
  if (!m) return undefined;
  const [, version = "", traceId = "", spanId = "", flags = "", rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The delivery headers of an attempt: svcd's span in the request's `traceparent`, its `tracestate`. */
export function traceHeaders(t: TraceContext): Array<[string, string]> {
  return t.state ? [["traceparent", t.span], ["tracestate", t.state]] : [["traceparent", t.span]];
}
