/**
 * Details of the hosted service's behaviour the official workflow SDK's users meet: what
 * `context.invoke` resolves to however the invoked run ends, how a `Promise.all` group shows in
 * the run's log, and a run started with `POST /v2/trigger` at an endpoint whose SDK is too old.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, serveMany } from "@upstash/workflow/nextjs";
import { WorkflowNonRetryableError, type WorkflowContext } from "@upstash/workflow";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld();
});
afterAll(async () => {
  await w?.stop();
});

describe("hosted details with the official workflow SDK", () => {
  test("context.invoke resolves to { body, isFailed, isCanceled }, both flags always there, however the invoked run ends", async () => {
    const got: Record<string, unknown> = {};
    const succeeding = createWorkflow(async (context: WorkflowContext<{ x: number }>) => {
      return await context.run("double", () => ({ doubled: context.requestPayload.x * 2 }));
    });
    const failing = createWorkflow(async (context: WorkflowContext) => {
      await context.run("explode", () => {
        throw new Error("child broke");
      });
    });
    const cancelling = createWorkflow(async (context: WorkflowContext) => {
      await context.run("first", () => 1);
      await context.cancel();
    });
    const parent = createWorkflow(async (context: WorkflowContext) => {
      const ok = await context.invoke("call-succeeding", { workflow: succeeding, body: { x: 21 } });
      // As the SDK's own examples check it.
      if (ok.isFailed === false && ok.isCanceled === false) await context.run("succeeded", () => "checked");
      const failed = await context.invoke("call-failing", { workflow: failing, body: {}, retries: 0 });
      const canceled = await context.invoke("call-cancelling", { workflow: cancelling, body: {} });
      await context.run("record", () => void Object.assign(got, { ok, failed, canceled }));
    });
    const { POST } = serveMany({ parent, succeeding, failing, cancelling }, { qstashClient: w.qstash, receiver: w.receiver });
    for (const name of ["parent", "succeeding", "failing", "cancelling"]) w.route(`/wf/invoked/${name}`, POST);
    const { workflowRunId } = await w.client.trigger({ url: `${w.base}/wf/invoked/parent` });
    await w.flush();
    const run = (await w.run(workflowRunId))!;
    expect(run.workflowState).toBe("RUN_SUCCESS");
    expect(run.steps.flatMap((g) => g.steps.map((s) => s.stepName))).toContain("succeeded");
    expect(got.ok).toEqual({ body: { doubled: 42 }, isFailed: false, isCanceled: false });
    // A failed or cancelled run hands back no body: the SDK's own examples check `body === undefined`.
    expect(got.failed).toEqual({ body: undefined, isFailed: true, isCanceled: false });
    expect((got.failed as { body?: unknown }).body).toBeUndefined();
    expect(got.canceled).toEqual({ body: undefined, isFailed: false, isCanceled: true });
    expect((got.canceled as { body?: unknown }).body).toBeUndefined();
  });

  test("a Promise.all group is one parallel entry of the log, each branch with its own state", async () => {
    const child = createWorkflow(async (context: WorkflowContext) => {
      return await context.run("child-step", () => "child done");
    });
    const parent = createWorkflow(async (context: WorkflowContext) => {
      await Promise.all([
        context.run("refuses", () => {
          throw new WorkflowNonRetryableError("not worth retrying");
        }),
        context.invoke("delegates", { workflow: child, body: {} }),
      ]);
    });
    const { POST } = serveMany({ parent, child }, { qstashClient: w.qstash, receiver: w.receiver });
    for (const name of ["parent", "child"]) w.route(`/wf/group/${name}`, POST);
    const { workflowRunId } = await w.client.trigger({ url: `${w.base}/wf/group/parent` });
    await w.flush();
    const { runs: children } = await w.client.logs({ workflowUrl: `${w.base}/wf/group/child` });
    expect(children.map((c) => c.workflowState)).toEqual(["RUN_SUCCESS"]);
    const run = (await w.run(workflowRunId))!;
    expect(run.workflowState).toBe("RUN_FAILED");
    const groups = run.steps.filter((g) => g.type === "parallel");
    expect(groups).toHaveLength(1);
    const branches = groups[0]!.steps as Array<{ stepName: string; stepType: string; state: string }>;
    const byName = Object.fromEntries(branches.map((b) => [b.stepName, b]));
    expect(Object.keys(byName).sort()).toEqual(["delegates", "refuses"]);
    expect(byName.refuses).toMatchObject({ stepType: "Run", state: "STEP_FAILED" });
    expect(byName.delegates).toMatchObject({ stepType: "Invoke", state: "STEP_SUCCESS", invokedWorkflowRunId: children[0]!.workflowRunId });
  });

  test("POST /v2/trigger to an endpoint whose SDK is older than 1.0 fails the run, saying why, asked to take it over or not", async () => {
    // What an SDK before 1.0 answers: 200 with the protocol header but without naming its version
    // (`Upstash-Workflow-Sdk`), and without starting a run it was asked to take over.
    const seen: Array<string | null> = [];
    const url = w.route("/wf/old-sdk", (request) => {
      seen.push(request.headers.get("upstash-workflow-unknown-sdk"));
      return Response.json({ workflowRunId: "wfr_its_own", finishCondition: "success" }, { headers: { "Upstash-Workflow-Sdk-Version": "1" } });
    });
    for (const headers of [{}, { "Upstash-Workflow-Unknown-Sdk": "true" }] as Array<Record<string, string>>) {
      const res = await w.svc.api(`/v2/trigger/${url}`, { method: "POST", body: "from curl", headers });
      expect(res.status).toBe(200);
      const { workflowRunId } = (await res.json()) as { workflowRunId: string };
      await w.flush();
      const run = (await w.run(workflowRunId))!;
      expect(run.workflowState).toBe("RUN_FAILED");
      expect(run.steps[0]).toMatchObject({ type: "sequential", steps: [{ stepName: "init", stepType: "Initial", state: "STEP_SUCCESS", out: "from curl" }] });
      const next = run.steps.find((g) => g.type === "next")!;
      const errors = next.steps.flatMap((s) => ((s as { errors?: Array<{ error: string }> }).errors ?? []).map((e) => e.error));
      expect(errors).toEqual(["trigger rest api is only usable with sdk versions after v1.0.0 major version"]);
    }
    expect(seen).toEqual([null, "true"]);
  });
});
