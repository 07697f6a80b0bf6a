import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

/**
 * The workflow tools of `/mcp` on a run of the official workflow SDK (hosted dialect): an agent
 * sees the run wait, notifies its event, and sees it finish with its steps.
 */
let w: WorkflowWorld;
let mcp: Client;

async function call(name: string, args: Record<string, unknown> = {}) {
  const result = (await mcp.callTool({ name, arguments: args })) as { content: Array<{ text: string }>; isError?: boolean };
  if (result.isError) throw new Error(`${name} failed: ${result.content[0]?.text}`);
  return JSON.parse(result.content[0]!.text);
}

beforeAll(async () => {
  w = await startWorkflowWorld();
  mcp = new Client({ name: "svcd-test", version: "1.0.0" });
  // The hosted dialect's token query parameter, as its messaging API takes it.
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${w.svc.url}/mcp?qstash_token=${encodeURIComponent(w.svc.token)}`)));
});
afterAll(async () => {
  await mcp?.close();
  await w?.stop();
});

test("a waiting run is listed with its steps, notify_event resumes it, get_workflow_run shows it finished", async () => {
  const done: unknown[] = [];
  const url = w.serve<{ id: string }>("/wf/mcp-approval", async (context) => {
    const { eventData } = await context.waitForEvent("approval", `mcp-${context.requestPayload.id}`, { timeout: "1h" });
    await context.run("record", () => done.push(eventData));
  });
  const { workflowRunId } = await w.client.trigger({ url, body: { id: "a1" } });
  await call("flush", { timeoutMs: 20_000 });

  const { runs } = await call("list_workflow_runs", { state: "RUN_STARTED" });
  expect(runs.map((r: { workflowRunId: string }) => r.workflowRunId)).toEqual([workflowRunId]);
  const waiting = await call("get_workflow_run", { workflowRunId });
  expect(waiting.steps.at(-1).steps[0]).toMatchObject({ stepName: "approval", stepType: "Wait", waitEventId: "mcp-a1" });

  const notified = await call("notify_event", { eventId: "mcp-a1", data: JSON.stringify({ approved: true }) });
  expect(notified).toEqual([expect.objectContaining({ workflowRunId })]);
  await call("flush", { timeoutMs: 20_000 });
  expect(done).toEqual([{ approved: true }]);
  const finished = await call("get_workflow_run", { workflowRunId });
  expect(finished.workflowState).toBe("RUN_SUCCESS");
  expect(finished.steps.flatMap((g: { steps: Array<{ stepName: string }> }) => g.steps.map((s) => s.stepName))).toContain("record");
});

test("rerun_workflow_run runs a run again from a step with a new result for a kept one; it is marked as changing state", async () => {
  const { tools } = await mcp.listTools();
  expect(tools.find((t) => t.name === "rerun_workflow_run")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  const seen: unknown[] = [];
  let fetches = 0;
  const url = w.serve("/wf/mcp-rerun", async (context) => {
    const rate = await context.run("fetch-rate", () => (fetches++, 2));
    await context.run("apply", () => void seen.push(rate * 10));
  });
  const { workflowRunId } = await w.client.trigger({ url });
  await call("flush", { timeoutMs: 20_000 });
  expect(seen).toEqual([20]);

  const rerun = await call("rerun_workflow_run", { workflowRunId, fromStep: "apply", results: { "fetch-rate": 3 }, headers: { "Upstash-Label": "mcp" } });
  expect(rerun).toEqual({ workflowRunId: expect.stringMatching(/^wfr_/), workflowCreatedAt: expect.any(Number) });
  await call("flush", { timeoutMs: 20_000 });
  expect(seen).toEqual([20, 30]);
  expect(fetches).toBe(1);
  const run = await call("get_workflow_run", { workflowRunId: rerun.workflowRunId });
  expect(run).toMatchObject({ workflowState: "RUN_SUCCESS", label: "mcp", rerunOf: { workflowRunId, stepName: "apply" } });
  // A bad step is the route's own 400, as the tool's error.
  const refused = (await mcp.callTool({ name: "rerun_workflow_run", arguments: { workflowRunId, fromStep: "nope" } })) as { content: Array<{ text: string }>; isError?: boolean };
  expect(refused.isError).toBe(true);
  expect(JSON.parse(refused.content[0]!.text)).toEqual({ status: 400, error: expect.stringContaining('has no step "nope"') });
});
