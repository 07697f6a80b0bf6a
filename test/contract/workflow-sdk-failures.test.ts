/**
 * What fails in a workflow run and where it shows, with the official workflow SDK: a
 * `context.call` whose third party keeps failing is the workflow's to handle (no failed run, no DLQ
 * entry); a failure function that fails itself is marked on the run's one DLQ entry and can be
 * called again from there; the workflow DLQ filters by the run's creation time and its failure
 * function's state. On the manual clock, so that runs start at instants of their own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { QstashError } from "@upstash/qstash";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld({ config: { clock: "manual" } });
});
afterAll(async () => {
  await w?.stop();
});

/** Every DLQ entry of the account whose message went to `url` (workflow or not). */
async function dlqEntriesFor(url: string) {
  const { messages } = (await (await w.svc.api("/v2/dlq")).json()) as { messages: Array<{ url: string }> };
  return messages.filter((m) => m.url === url);
}

describe("failures in workflow runs", () => {
  test("a context.call whose retries run out hands its last answer to the workflow once; the run goes on and leaves no DLQ entry", async () => {
    let attempts = 0;
    const third = w.route("/third/down", () => {
      attempts++;
      return new Response("down for maintenance", { status: 503 });
    });
    const handed: Array<{ status: number; body: unknown }> = [];
    let callbacks = 0;
    const url = w.serve("/wf/call-down", async (context) => {
      const { status, body } = await context.call("ask-down", { url: third, retries: 2, retryDelay: "0" });
      await context.run("record", () => void handed.push({ status, body }));
      return status;
    });
    // Count the call's answers that reach the workflow endpoint (they carry this header).
    const served = w.routeHandler("/wf/call-down")!;
    w.route("/wf/call-down", (request) => {
      if (request.headers.get("upstash-workflow-callback")) callbacks++;
      return served(request);
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(attempts).toBe(3);
    expect(callbacks).toBe(1);
    expect(handed).toEqual([{ status: 503, body: "down for maintenance" }]);
    const run = (await w.run(workflowRunId))!;
    expect(run).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: "503" });
    expect(run.dlqId).toBeUndefined();
    expect(await dlqEntriesFor(third)).toEqual([]);
    expect((await w.client.dlq.list({ filter: { workflowRunId } })).messages).toEqual([]);
  });

  test("a context.call answered with a non-retryable error before its retries ran out is handed to the workflow at once", async () => {
    let attempts = 0;
    const third = w.route("/third/refuses", () => {
      attempts++;
      return new Response("never", { status: 489, headers: { "Upstash-NonRetryable-Error": "true" } });
    });
    const handed: number[] = [];
    const url = w.serve("/wf/call-refused", async (context) => {
      const { status } = await context.call("ask-refused", { url: third, retries: 3, retryDelay: "0" });
      await context.run("record", () => void handed.push(status));
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(attempts).toBe(1);
    // The SDK waits for the call's last answer: it learns this one is the last.
    expect(handed).toEqual([489]);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
    expect(await dlqEntriesFor(third)).toEqual([]);
  });

  test("a failure function that fails is marked on the run's one DLQ entry; it is called again from there only while it has failed", async () => {
    let broken = true;
    let failureCalls = 0;
    const url = w.serve(
      "/wf/failure-fails",
      async (context) => {
        await context.run("explode", () => {
          throw new Error("step broke");
        });
      },
      {
        failureFunction: () => {
          failureCalls++;
          if (broken) throw new Error("the failure function broke too");
          return "cleaned up";
        },
      },
    );
    const { workflowRunId } = await w.client.trigger({ url, body: { n: 1 }, retries: 0 });
    await w.flush();
    // The run's retries (0) apply to its failure function's call too.
    expect(failureCalls).toBe(1);
    const failed = (await w.run(workflowRunId))!;
    expect(failed.workflowState).toBe("RUN_FAILED");
    expect(failed.failureFunction).toMatchObject({ state: "CALLBACK_FAIL", responseStatus: 500, failResponse: "step broke" });
    // The failed failure call is no DLQ entry of its own: the run has one, which says how its failure function went.
    expect(await dlqEntriesFor(url)).toHaveLength(1);
    const [entry] = (await w.client.dlq.list({ filter: { workflowRunId } })).messages;
    expect(entry).toMatchObject({ dlqId: failed.dlqId, failureCallbackInfo: { state: "CALLBACK_FAIL", responseStatus: 500 } });

    broken = false;
    expect(await w.client.dlq.retryFailureFunction({ dlqId: entry!.dlqId })).toMatchObject({ workflowRunId });
    await w.flush();
    expect(failureCalls).toBe(2);
    expect((await w.run(workflowRunId))!.failureFunction).toMatchObject({ state: "CALLBACK_SUCCESS", responseStatus: 200 });
    const [after] = (await w.client.dlq.list({ filter: { workflowRunId } })).messages;
    expect(after!.failureCallbackInfo).toMatchObject({ state: "CALLBACK_SUCCESS" });
    // A failure function that succeeded is not called again.
    const again = await w.client.dlq.retryFailureFunction({ dlqId: entry!.dlqId }).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(QstashError);
    expect((again as QstashError).status).toBe(400);
    expect(failureCalls).toBe(2);
  });
  test("the workflow DLQ filters by the run's creation time and its failure function's state: list, restart, resume, delete", async () => {
    let fixed = false;
    const url = w.serve<{ job: string; cleanupBreaks: boolean }>(
      "/wf/dlq-filters",
      async (context) => {
        await context.run("fragile", () => {
          if (!fixed) throw new Error(`job ${context.requestPayload.job} broke`);
        });
      },
      {
        failureFunction: ({ context }) => {
          if (context.requestPayload.cleanupBreaks) throw new Error("the cleanup broke too");
        },
      },
    );
    const createdAt: Record<string, number> = {};
    const runIds: Record<string, string> = {};
    for (const [job, cleanupBreaks] of [["a", false], ["b", true], ["c", true]] as const) {
      const { workflowRunId } = await w.client.trigger({ url, body: { job, cleanupBreaks }, retries: 0 });
      await w.flush();
      runIds[job] = workflowRunId;
      createdAt[job] = (await w.run(workflowRunId))!.workflowRunCreatedAt;
      await w.advance(1);
    }
    const jobOf = (runId: string) => Object.keys(runIds).find((job) => runIds[job] === runId);
    const list = async (filter: { workflowCreatedAt?: number; failureFunctionState?: string }) =>
      (await w.client.dlq.list({ filter: { workflowUrl: url, ...filter } })).messages.map((m) => jobOf(m.workflowRunId)).sort();
    expect(await list({})).toEqual(["a", "b", "c"]);
    expect(await list({ failureFunctionState: "CALLBACK_FAIL" })).toEqual(["b", "c"]);
    expect(await list({ failureFunctionState: "CALLBACK_SUCCESS" })).toEqual(["a"]);
    expect(await list({ workflowCreatedAt: createdAt.b })).toEqual(["b"]);
    expect(await list({ workflowCreatedAt: createdAt.b, failureFunctionState: "CALLBACK_SUCCESS" })).toEqual([]);
    // Each entry says where its failure function stands.
    const raw = await (await w.svc.api(`/v2/dlq?source=workflow&workflowRunId=${runIds.a}`)).json();
    expect(raw.messages[0]).toMatchObject({ failureFunctionState: "CALLBACK_SUCCESS", workflowCreatedAt: createdAt.a });
    // The workflow DLQ's own listing (the hosted REST API's) has the same filters.
    const own = await (await w.svc.api(`/v2/workflows/dlq?workflowUrl=${encodeURIComponent(url)}&failureFunctionState=CALLBACK_FAIL`)).json();
    expect(own.messages.map((m: { workflowRunId: string }) => jobOf(m.workflowRunId)).sort()).toEqual(["b", "c"]);
    const one = await (await w.svc.api(`/v2/workflows/dlq/${raw.messages[0].dlqId}`)).json();
    expect(one).toMatchObject({ workflowRunId: runIds.a, failureFunctionState: "CALLBACK_SUCCESS" });
    expect((await w.svc.api("/v2/workflows/dlq/no-such-entry")).status).toBe(404);
    const refused = await w.svc.api("/v2/dlq?failureFunctionState=CALLBACK_MAYBE");
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toContain("CALLBACK_FAIL");

    fixed = true;
    const restarted = await w.client.dlq.restart({ filter: { workflowUrl: url, workflowCreatedAt: createdAt.a } });
    expect(restarted.workflowRuns).toHaveLength(1);
    const resumed = await w.client.dlq.resume({ filter: { workflowUrl: url, failureFunctionState: "CALLBACK_FAIL", workflowCreatedAt: createdAt.b } });
    expect(resumed.workflowRuns).toHaveLength(1);
    await w.flush();
    for (const run of [...restarted.workflowRuns, ...resumed.workflowRuns])
      expect((await w.run(run.workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
    expect(await list({})).toEqual(["c"]);
    expect(await w.client.dlq.delete({ filter: { workflowUrl: url, failureFunctionState: "CALLBACK_SUCCESS" } })).toEqual({ deleted: 0 });
    expect(await w.client.dlq.delete({ filter: { workflowUrl: url, failureFunctionState: "CALLBACK_FAIL" } })).toEqual({ deleted: 1 });
    expect(await list({})).toEqual([]);
  });
});
