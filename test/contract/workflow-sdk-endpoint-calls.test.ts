/**
 * How many times svcd calls a workflow endpoint, counted exactly with the official workflow SDK:
 * one call per step as the hosted service makes them, in the shape of the SDK's own CI app that
 * starts runs through `POST /v2/trigger` from inside its steps. A REST trigger without
 * `Upstash-Workflow-Unknown-Sdk` goes to the endpoint as the run's first step; one with it first
 * asks the endpoint's SDK to take the run over (one call more).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { WorkflowNonRetryableError, type WorkflowContext } from "@upstash/workflow";
import { createWorkflow, serveMany } from "@upstash/workflow/nextjs";
import { hostedToken } from "../../src/accounts/hosted-token.ts";
import { DEFAULT_ACCOUNT } from "../../src/config/config.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;
const token = hostedToken(DEFAULT_ACCOUNT.userId, DEFAULT_ACCOUNT.token);

beforeAll(async () => {
  w = await startWorkflowWorld({ token, config: { clock: "manual" } });
});
afterAll(async () => {
  await w?.stop();
});

const WEBHOOK_RESULT = "webhook called";

test("a run that triggers two runs of its app and a plain route, and waits twice for their webhook: one call per step, 16 in all", async () => {
  const calls: Array<{ workflow: string; runId: string | null; unknownSdk: boolean }> = [];
  /** Starts a run through the REST API as a caller without the SDK would, from inside a step. */
  const restTrigger = async (url: string, body: string, headers: Record<string, string>) => {
    const res = await fetch(`${w.svc.url}/v2/trigger/${url}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "Upstash-Retries": "0", ...headers },
      body,
    });
    if (!res.ok) throw new WorkflowNonRetryableError(`trigger failed with ${res.status}: ${await res.text()}`);
    return (await res.json()) as { workflowRunId: string; workflowCreatedAt: number };
  };

  const webhookWorkflow = createWorkflow(async (context: WorkflowContext<{ webhookUrl: string }>) => {
    if (context.headers.get("x-ci-route") !== "qstash-trigger") throw new Error("the trigger's forwarded header is missing");
    await context.run("do work", () => "work completed");
    return await context.run("call webhook", async () => {
      const res = await fetch(context.requestPayload.webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ result: WEBHOOK_RESULT }),
      });
      if (!res.ok) throw new Error(`webhook call failed with ${res.status}`);
      return res.ok;
    });
  });
  const seen: string[] = [];
  const mainWorkflow = createWorkflow(async (context: WorkflowContext<{ test: string }>) => {
    if (context.headers.get("x-test-header") !== "main") throw new Error("the trigger's header is missing");
    const webhook = await context.createWebhook("create webhook");
    const child = `${w.base}/wf/count/webhookWorkflow`;
    const forwarded = { "Upstash-Forward-X-Ci-Route": "qstash-trigger" };
    const big = JSON.stringify({ webhookUrl: webhook.webhookUrl, large: "x".repeat(5 * 1024 * 1024) });
    await context.run("call workflow endpoint", () => restTrigger(child, big, { ...forwarded, "Upstash-Workflow-Unknown-Sdk": "true" }));
    await context.run("call workflow endpoint", () => restTrigger(child, JSON.stringify({ webhookUrl: webhook.webhookUrl }), forwarded));
    const plain = await context.run("call post endpoint", () => restTrigger(`${w.base}/wf/count/post`, '{"data":"test-data"}', forwarded));
    for (let i = 0; i < 2; i++) {
      const { timeout, request } = await context.waitForWebhook("wait for webhook", webhook, "30s");
      if (timeout || request?.method !== "POST") throw new WorkflowNonRetryableError("the webhook was not called");
      seen[i] = ((await request.json()) as { result: string }).result;
    }
    await context.run("verify complete", () =>
      waitUntil(async () => (await w.client.logs({ workflowRunId: plain.workflowRunId })).runs[0]?.workflowState === "RUN_FAILED", {
        timeoutMs: 10_000,
        what: "the plain route's run to fail",
      }),
    );
    await context.sleep("pause", 2);
  });

  const { POST } = serveMany({ mainWorkflow, webhookWorkflow }, { qstashClient: w.qstash, receiver: w.receiver });
  for (const workflow of ["mainWorkflow", "webhookWorkflow"])
    w.route(`/wf/count/${workflow}`, (request) => {
      calls.push({
        workflow,
        runId: request.headers.get("upstash-workflow-runid"),
        unknownSdk: request.headers.get("upstash-workflow-unknown-sdk") === "true",
      });
      return POST(request);
    });
  w.route("/wf/count/post", () => Response.json({ ok: true }, { headers: { "Upstash-Workflow-Sdk-Version": "1" } }));

  const { workflowRunId } = await w.client.trigger({
    url: `${w.base}/wf/count/mainWorkflow`,
    body: { test: "payload" },
    headers: { "x-test-header": "main" },
    retries: 0,
  });
  await w.flush();
  await w.advance(2_000);
  const run = (await w.run(workflowRunId))!;
  expect(run.workflowState).toBe("RUN_SUCCESS");
  expect(seen).toEqual([WEBHOOK_RESULT, WEBHOOK_RESULT]);

  // Nine steps of the main run (its start, eight steps), one call each.
  expect(calls.filter((c) => c.workflow === "mainWorkflow").length).toBe(9);
  const children = Map.groupBy(
    calls.filter((c) => c.workflow === "webhookWorkflow"),
    (c) => c.runId,
  );
  const shapes = [...children.values()].map((runCalls) => runCalls.map((c) => (c.unknownSdk ? "take over" : "step")));
  // The run asked to be taken over: the SDK's hand-over, then its start and two steps; the other
  // starts at its first step.
  expect(shapes.sort((a, b) => b.length - a.length)).toEqual([
    ["take over", "step", "step", "step"],
    ["step", "step", "step"],
  ]);
  expect(calls.length).toBe(16);
});
