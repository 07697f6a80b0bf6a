import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "../config/tracing.ts";
import type { Logger } from "../core/log.ts";

/** `OTEL_TRACES_SAMPLER` and its argument, as the OpenTelemetry SDKs read them. */
export function samplerOf(config: Pick<TracingConfig, "sampler" | "samplerRatio">): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio;
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * Ids a span is to have, when it is made after the fact: a message's span and an attempt's are
 * named in the `traceparent` svcd passes on before the span itself is made (after the commit, or
 * when the attempt's outcome is recorded). Random ids otherwise.
 */
export class ChosenIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  traceId: string | undefined;
  spanId: string | undefined;

  generateTraceId = (): string => {
    const id = this.traceId ?? this.random.generateTraceId();
    this.traceId = undefined;
    return id;
  };

  generateSpanId = (): string => {
    const id = this.spanId ?? this.random.generateSpanId();
    this.spanId = undefined;
    return id;
  };
}

/** How often a failed export is logged: a collector that is down says so once a minute, not per batch. */
const FAILURE_LOG_EVERY_MS = 60_000;

/**
 * The OTLP exporter, telling the log when exports fail. A collector that is down or slow costs
 * only the spans: the batch processor drops what does not fit its queue, and nothing waits for it.
 */
class LoggedExporter implements SpanExporter {
  private lastLogged = -Infinity;
  private failures = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly log: Logger,
    private readonly endpoint: string,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.failed(spans.length, result.error);
      done(result);
    });
  }

  private failed(spans: number, error: Error | undefined): void {
    this.failures += spans;
    const now = performance.now();
    if (now - this.lastLogged < FAILURE_LOG_EVERY_MS) return;
    this.lastLogged = now;
    this.log.warn("exporting trace spans failed; they are dropped", {
      endpoint: this.endpoint,
      droppedSpans: this.failures,
      error: String(error?.message ?? error ?? "unknown"),
    });
    this.failures = 0;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The SDK's provider: spans batched to the configured OTLP/HTTP endpoint as JSON. */
export function createProvider(config: TracingConfig, log: Logger, version: string, ids: IdGenerator): BasicTracerProvider {
  const exporter = new OTLPTraceExporter({ url: config.endpoint, headers: config.headers, timeoutMillis: 10_000 });
  const { batch } = config;
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ ...config.resource, "service.name": config.serviceName, "service.version": version }),
    sampler: samplerOf(config),
    idGenerator: ids,
    spanProcessors: [
      new BatchSpanProcessor(new LoggedExporter(exporter, log, config.endpoint), {
        scheduledDelayMillis: batch.delayMs,
        maxQueueSize: batch.maxQueueSize,
        maxExportBatchSize: batch.maxBatchSize,
        exportTimeoutMillis: batch.exportTimeoutMs,
      }),
    ],
  });
}
