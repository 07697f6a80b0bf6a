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
