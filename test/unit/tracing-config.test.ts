import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config/config.ts";
import { tracingFromEnv } from "../../src/config/tracing.ts";
import { childOf, parseTraceparent, reparent, spanIdOf, traceIdOf } from "../../src/model/trace.ts";

describe("tracing from the OTEL_* variables", () => {
  test("off unless an endpoint is set, and when turned off", () => {
    expect(tracingFromEnv({})).toBeNull();
    expect(tracingFromEnv({ OTEL_SERVICE_NAME: "x" })).toBeNull();
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })).toBeNull();
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })).toBeNull();
  });

  test("the traces endpoint: the signal's own as is, else the base one with /v1/traces", () => {
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })!.endpoint).toBe("http://c:4318/v1/traces");
    const both = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t/custom" };
    expect(tracingFromEnv(both)!.endpoint).toBe("https://t/custom");
  });

  test("headers (the traces' own win), service name, resource attributes and the sampler", () => {
    const config = tracingFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "a=1,b=two%20words",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "a=3",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=from-resource,deployment.environment=test",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
    })!;
    expect(config.headers).toEqual({ a: "3", b: "two words" });
    expect(config.serviceName).toBe("from-resource");
    expect(config.resource).toEqual({ "deployment.environment": "test" });
    expect(config).toMatchObject({ sampler: "parentbased_traceidratio", samplerRatio: 0.25 });
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_SERVICE_NAME: "svc" })!.serviceName).toBe("svc");
    expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c" })).toMatchObject({ serviceName: "svcd", sampler: "parentbased_always_on" });
  });

  test("what svcd cannot honour fails the start, naming the variable", () => {
    const bad: Array<[Record<string, string>, string]> = [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "c:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "OTEL_EXPORTER_OTLP_PROTOCOL"],
      [{ OTEL_TRACES_EXPORTER: "zipkin" }, "OTEL_TRACES_EXPORTER"],
      [{ OTEL_TRACES_SAMPLER: "sometimes" }, "OTEL_TRACES_SAMPLER"],
      [{ OTEL_TRACES_SAMPLER_ARG: "2" }, "OTEL_TRACES_SAMPLER_ARG"],
      [{ OTEL_EXPORTER_OTLP_HEADERS: "novalue" }, "OTEL_EXPORTER_OTLP_HEADERS"],
      [{ OTEL_BSP_MAX_QUEUE_SIZE: "0" }, "OTEL_BSP_MAX_QUEUE_SIZE"],
    ];
    for (const [env, name] of bad) {
      let error: unknown;
      try {
        tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...env });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).flag).toBe(name);
    }
  });
});

describe("W3C trace context", () => {
  const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  test("traceparent: version 00 exactly, later versions by their first fields, invalid ids refused", () => {
    expect(parseTraceparent(valid)).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true });
    expect(parseTraceparent(valid.replace(/01$/, "00"))!.sampled).toBe(false);
    expect(parseTraceparent(`01${valid.slice(2)}-later`)).toBeDefined();
    for (const bad of [
      `${valid}-extra`,
      valid.replace("4bf92f3577b34da6a3ce929d0e0e4736", "0".repeat(32)),
      valid.replace("00f067aa0ba902b7", "0".repeat(16)),
      `ff${valid.slice(2)}`,
      valid.toUpperCase(),
      "",
      undefined,
    ])
      expect(parseTraceparent(bad)).toBeUndefined();
  });

  test("a child keeps the trace and names its parent; a reparented context joins the other trace", () => {
    const parent = { span: valid, state: "a=1" };
    const child = childOf(parent);
    expect(traceIdOf(child)).toBe(traceIdOf(parent));
    expect(child.parentId).toBe(spanIdOf(parent));
    expect(spanIdOf(child)).not.toBe(spanIdOf(parent));
    expect(child.state).toBe("a=1");
    const run = { span: `00-${"5".repeat(32)}-${"6".repeat(16)}-00` };
    const joined = reparent(child, run);
    expect(joined).toEqual({ span: `00-${"5".repeat(32)}-${spanIdOf(child)}-00`, parentId: "6".repeat(16), state: undefined });
  });
});
