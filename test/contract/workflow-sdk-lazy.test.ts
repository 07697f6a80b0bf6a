/**
 * A run whose step list outgrows the plan's message size is delivered with an empty body, and the
 * SDK fetches the list itself (`GET /v2/workflows/runs/{id}`, its lazy fetch): the run goes on.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

const MAX_MESSAGE = 4096;
let w: WorkflowWorld;
const fetched: string[] = [];

beforeAll(async () => {
  w = await startWorkflowWorld({ configFile: { plans: { payg: { maxMessageSize: MAX_MESSAGE } } } });
});
afterAll(async () => {
  await w?.stop();
});

test("a step list larger than the message size limit is delivered empty and fetched by the SDK", async () => {
  const chunk = "x".repeat(1500);
  const url = w.serve("/wf/lazy", async (context) => {
    const a = await context.run("a", () => chunk);
    const b = await context.run("b", () => chunk);
    const c = await context.run("c", () => chunk);
    return await context.run("sizes", () => a.length + b.length + c.length);
  });
  // Watch the SDK's own requests to the run's list.
  const original = w.qstash.http.request.bind(w.qstash.http);
  w.qstash.http.request = (req) => {
    if (req.path?.[2] === "runs" && (req.method ?? "GET") === "GET") fetched.push(req.path.join("/"));
    return original(req);
  };
  const { workflowRunId } = await w.client.trigger({ url, body: "start" });
  await w.flush();
  const run = (await w.run(workflowRunId))!;
  expect(run.workflowState).toBe("RUN_SUCCESS");
  expect(run.workflowRunResponse).toBe("4500");
  expect(fetched.length).toBeGreaterThan(0);
  expect(fetched.every((p) => p === `v2/workflows/runs/${workflowRunId}`)).toBe(true);
});
