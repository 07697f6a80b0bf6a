/**
 * What the hosted API does with a run beyond the SDK's own calls, with the official workflow SDK
 * serving the endpoint: `DELETE /v2/workflows/runs/{id}` cancels the run; the logs select runs by
 * `workflowRuns` and by their steps' states and trim bodies (`trimBody`); a failure function's call
 * in progress is cancelled. Routes the SDK's client does not call are asked with plain HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { WorkflowRunLog } from "@upstash/workflow";
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

/** `GET /v2/workflows/logs` with a query, as the documented REST API (the SDK's client has no such options). */
async function logs(query: string): Promise<{ status: number; runs: WorkflowRunLog[]; error?: string }> {
  const res = await w.svc.api(`/v2/workflows/logs?${query}`);
  const body = (await res.json()) as { runs?: WorkflowRunLog[]; error?: string };
  return { status: res.status, runs: body.runs ?? [], error: body.error };
}
const idsOf = (runs: WorkflowRunLog[]) => runs.map((r) => r.workflowRunId).sort();

describe("workflow logs", () => {
  test("workflowRuns=ID@TS,… selects exactly those runs; a pair whose time is not the run's selects nothing", async () => {
    const url = w.serve("/wf/pairs", async (context) => context.run("one", () => 1));
    const started = await w.client.trigger([{ url }, { url }, { url }]);
    await w.flush();
    const [a, b, c] = await Promise.all(started.map(async (s) => (await w.run(s.workflowRunId))!));
    const pair = (r: WorkflowRunLog, at = r.workflowRunCreatedAt) => `${r.workflowRunId}@${at}`;
    expect(idsOf((await logs(`workflowRuns=${pair(a!)},${pair(c!)}`)).runs)).toEqual(idsOf([a!, c!]));
    expect(idsOf((await logs(`workflowRuns=${pair(a!)}&workflowRuns=${pair(b!)}`)).runs)).toEqual(idsOf([a!, b!]));
    expect((await logs(`workflowRuns=${pair(b!, b!.workflowRunCreatedAt + 1)}`)).runs).toEqual([]);
    const bad = await logs(`workflowRuns=${a!.workflowRunId}`);
    expect(bad.status).toBe(400);
    expect(bad.error).toContain("runId@workflowCreatedAt");
  });

  test("state takes the step states too: runs with such a step, OR-ed with run states", async () => {
    const fine = w.serve("/wf/fine", async (context) => context.run("ok", () => "fine"));
    const flaky = w.serve("/wf/flaky", async (context) => {
      await context.run("breaks", () => {
        throw new Error("not yet");
      });
    });
    const { workflowRunId: done } = await w.client.trigger({ url: fine, label: "step-states" });
    const { workflowRunId: retrying } = await w.client.trigger({ url: flaky, label: "step-states", retries: 3 });
    await w.flush();
    const states = async (state: string) => idsOf((await logs(`label=step-states&state=${state}`)).runs);
    expect(await states("STEP_RETRY")).toEqual([retrying]);
    expect(await states("STEP_SUCCESS")).toEqual([done, retrying].sort());
    expect(await states("STEP_FAILED")).toEqual([]);
    expect(await states("STEP_RETRY,RUN_SUCCESS")).toEqual([done, retrying].sort());
    expect(await states("RUN_SUCCESS")).toEqual([done]);
    // A page of one still finds the run by its step, and its cursor goes on from there.
    const page = await w.svc.api("/v2/workflows/logs?label=step-states&state=STEP_RETRY&count=1");
    expect(((await page.json()) as { runs: WorkflowRunLog[] }).runs.map((r) => r.workflowRunId)).toEqual([retrying]);
    const bad = await logs("state=STEP_SOMETHING");
    expect(bad.status).toBe(400);
    expect(bad.error).toContain("STEP_CANCELED");
    await w.client.cancel({ ids: [retrying] });
  });

  test("trimBody cuts every request and response body of the log; without it they are whole", async () => {
    const long = "x".repeat(200);
    const url = w.serve<string>("/wf/long", async (context) => {
      const got = await context.run("echo", () => context.requestPayload);
      return got.toUpperCase();
    });
    const { workflowRunId } = await w.client.trigger({ url, body: long });
    await w.flush();
    const whole = (await logs(`workflowRunId=${workflowRunId}`)).runs[0]!;
    const trimmed = (await logs(`workflowRunId=${workflowRunId}&trimBody=10`)).runs[0]!;
    const outs = (r: WorkflowRunLog) => r.steps.flatMap((g) => g.steps.map((s) => ("out" in s ? String(s.out) : "")));
    expect(outs(whole).map((o) => o.length)).toEqual([200, 202]);
    expect(outs(trimmed)).toEqual(["x".repeat(10), `"${"x".repeat(9)}`]);
    expect(whole.workflowRunResponse).toBe(JSON.stringify("X".repeat(200)));
    expect(trimmed.workflowRunResponse).toBe(`"${"X".repeat(9)}`);
    expect((await logs(`workflowRunId=${workflowRunId}&trimBody=ten`)).status).toBe(400);
  });
});

describe("the failure function's call", () => {
  test("DELETE /v2/workflows/dlq/callback/{dlqId} cancels a call in progress; with none in progress it is 400", async () => {
    let called = 0;
    const failureUrl = w.route("/failure/down", () => {
      called++;
      return new Response("down", { status: 500 });
    });
    const url = w.serve("/wf/fails-once", async (context) => {
      await context.run("breaks", () => {
        throw new Error("broken");
      });
    });
    const { workflowRunId } = await w.client.trigger({ url, failureUrl, retries: 1 });
    await w.flush();
    // Past the step's one retry (its backoff is about 12 s), not past the failure function's first retry.
    await w.advance(13_000);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_FAILED");
    expect(called).toBe(1);
    const { messages } = await w.client.dlq.list({ filter: { workflowRunId } });
    expect(messages[0]!.failureCallbackInfo?.state).toBe("CALLBACK_INPROGRESS");
    const dlqId = messages[0]!.dlqId;

    const res = await w.svc.api(`/v2/workflows/dlq/callback/${dlqId}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    await w.advance(3_600_000);
    expect(called).toBe(1);
    const after = await w.client.dlq.list({ filter: { workflowRunId } });
    expect(after.messages[0]!.failureCallbackInfo?.state).toBe("CALLBACK_CANCELED");
    expect((await w.run(workflowRunId))!.failureFunction?.state).toBe("CALLBACK_CANCELED");

    const again = await w.svc.api(`/v2/workflows/dlq/callback/${dlqId}`, { method: "DELETE" });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toContain("CALLBACK_CANCELED");
    expect((await w.svc.api("/v2/workflows/dlq/callback/dlq_unknown", { method: "DELETE" })).status).toBe(404);
  });
});
