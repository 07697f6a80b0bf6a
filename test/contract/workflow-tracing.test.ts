/**
 * A workflow run of the official SDK is one trace: the run's span, its trigger and every step
 * under it, each delivery carrying svcd's span of that attempt; the run's log names the trace.
 * Runs on both engines (scripts/test-postgres.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tracingFromEnv } from "../../src/config/tracing.ts";
import { startOtlpReceiver, traceparentParts, type OtlpReceiver } from "../helpers/otlp-receiver.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;
let otlp: OtlpReceiver;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  const tracing = tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "10" });
  w = await startWorkflowWorld({ config: { tracing } });
});
afterAll(async () => {
  await w?.stop();
  otlp?.stop();
});

test("a run is one trace: its span over the trigger and every step, each delivery's traceparent svcd's span for it", async () => {
  const url = w.serve<{ n: number }>("/wf/traced", async (context) => {
    const a = await context.run("add-one", () => context.requestPayload.n + 1);
    await context.run("double", () => a * 2);
  });
  const deliveries: string[] = [];
  const serveRun = w.routeHandler("/wf/traced")!;
  w.route("/wf/traced", (request) => {
    deliveries.push(request.headers.get("traceparent") ?? "none");
    return serveRun(request);
  });
  const { workflowRunId } = await w.client.trigger({ url, body: { n: 1 } });
  await w.flush();

  const logs = (await (await w.svc.api(`/v2/workflows/logs?workflowRunId=${workflowRunId}`)).json()) as {
    runs: Array<{ workflowState: string; traceId?: string }>;
  };
  const run = logs.runs[0]!;
  expect(run.workflowState).toBe("RUN_SUCCESS");
  expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(deliveries.length).toBeGreaterThanOrEqual(3);
  const parts = deliveries.map(traceparentParts);
  expect(new Set(parts.map((p) => p.traceId))).toEqual(new Set([run.traceId!]));

  const runSpan = await otlp.span((s) => s.name === "workflow run" && s.attributes["svcd.workflow.run_id"] === workflowRunId, "of the run");
  expect(runSpan).toMatchObject({ traceId: run.traceId, parentSpanId: undefined });
  expect(runSpan.attributes["svcd.workflow.state"]).toBe("RUN_SUCCESS");
  // Every delivery's span has a parent made by svcd (the trigger or a step), and that one the run's span.
  for (const p of parts) {
    const attempt = await otlp.span((s) => s.spanId === p.spanId, "of a delivery");
    expect(attempt.name).toBe("deliver workflow step");
    const made = await otlp.span((s) => s.spanId === attempt.parentSpanId, "that made a step");
    expect(["workflow run start", "workflow step"]).toContain(made.name);
    expect(made.parentSpanId).toBe(runSpan.spanId);
  }
  await waitUntil(() => otlp.spans.some((s) => s.name === "workflow run start" && s.parentSpanId === runSpan.spanId), {
    what: "the trigger's span",
  });
});
