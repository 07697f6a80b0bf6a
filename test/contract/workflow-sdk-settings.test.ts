/**
 * What the hosted API does with a run beyond the SDK's own calls, with the official workflow SDK
 * serving the endpoint: `DELETE /v2/workflows/runs/{id}` cancels the run.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld({ config: { clock: "manual" } });
});
afterAll(async () => {
  await w?.stop();
});

describe("ending a run by its id", () => {
  test("DELETE /v2/workflows/runs/{id} without `cancel` cancels the run: its pending step never runs", async () => {
    const ran: string[] = [];
    const url = w.serve("/wf/delete-cancels", async (context) => {
      await context.run("before", () => ran.push("before"));
      await context.sleep("nap", 60);
      await context.run("after", () => ran.push("after"));
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(ran).toEqual(["before"]);
    const res = await w.svc.api(`/v2/workflows/runs/${workflowRunId}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    await w.advance(120_000);
    expect(ran).toEqual(["before"]);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_CANCELED");
    // Ending it again changes nothing.
    expect((await w.svc.api(`/v2/workflows/runs/${workflowRunId}`, { method: "DELETE" })).status).toBe(200);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_CANCELED");
  });

  test("the SDK's own end of a run (`cancel=false`) still finishes it with its result", async () => {
    const url = w.serve("/wf/finishes", async (context) => context.run("only", () => "done"));
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(await w.run(workflowRunId)).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: '"done"' });
  });
});
