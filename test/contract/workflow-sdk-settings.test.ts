/**
 * What the hosted API does with a run beyond the SDK's own calls, with the official workflow SDK
 * serving the endpoint: `DELETE /v2/workflows/runs/{id}` cancels the run; the logs select runs by
 * `workflowRuns` and by their steps' states and trim bodies (`trimBody`); a failure function's call
 * in progress is cancelled; a run started by `POST /v2/trigger` keeps the trigger's settings, whether
 * the endpoint's SDK takes it over or not; a DLQ resume or restart overrides the failed run's settings. Routes
 * and options the SDK's client does not have are asked with plain HTTP.
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

describe("a run started without the SDK keeps its trigger's settings, whether the SDK takes it over or not", () => {
  /** A workflow whose second step fails; every delivery's headers are kept. */
  function failingWorkflow(path: string) {
    const deliveries: Headers[] = [];
    const url = w.serve(path, async (context) => {
      await context.run("first", () => 1);
      await context.run("second", () => {
        throw new Error("second breaks");
      });
    });
    const served = w.routeHandler(path)!;
    w.route(path, (request) => {
      deliveries.push(new Headers(request.headers));
      return served(request);
    });
    return { url, deliveries };
  }

  const cases = (["POST /v2/trigger/{url}", "POST /v2/batch/trigger"] as const).flatMap((how) => [false, true].map((takeOver) => ({ how, takeOver })));
  for (const { how, takeOver } of cases) {
    const name = `${how.length}-${takeOver}`;
    test(`${how}${takeOver ? ", taken over by the SDK" : ""}: retries, retry delay, label, flow control and failure callback apply to every step`, async () => {
      const failures: string[] = [];
      const failureUrl = w.route(`/failure/${name}`, async (request) => {
        failures.push(await request.text());
        return new Response("noted");
      });
      const { url, deliveries } = failingWorkflow(`/wf/rest-settings-${name}`);
      const settings: Record<string, string> = {
        "Upstash-Retries": "1",
        "Upstash-Retry-Delay": "5000",
        "Upstash-Label": `rest-${name}`,
        "Upstash-Flow-Control-Key": `rest-key-${name}`,
        "Upstash-Flow-Control-Value": "parallelism=2",
        "Upstash-Failure-Callback": failureUrl,
        "Upstash-Forward-X-Tenant": "acme",
        "Content-Type": "text/plain",
        ...(takeOver ? { "Upstash-Workflow-Unknown-Sdk": "true" } : {}),
      };
      const res =
        how === "POST /v2/trigger/{url}"
          ? await w.svc.api(`/v2/trigger/${url}`, { method: "POST", body: "payload", headers: settings })
          : await w.svc.api("/v2/batch/trigger", {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify([{ destination: url, body: "payload", headers: settings }]),
            });
      // Batch trigger answers 201 as the hosted API documents; a single trigger 200.
      expect(res.status).toBe(how === "POST /v2/trigger/{url}" ? 200 : 201);
      const answer = (await res.json()) as { workflowRunId: string } | Array<{ workflowRunId: string }>;
      const workflowRunId = Array.isArray(answer) ? answer[0]!.workflowRunId : answer.workflowRunId;
      await w.flush();
      // The failing step's one retry comes after its own delay (5 s), not the default backoff.
      expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_STARTED");
      await w.advance(4_999);
      expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_STARTED");
      await w.advance(1);
      const run = (await w.run(workflowRunId))!;
      expect(run).toMatchObject({ workflowState: "RUN_FAILED", label: `rest-${name}`, flowControlKey: `rest-key-${name}` });
      expect(failures).toHaveLength(1);
      expect(run.failureFunction?.state).toBe("CALLBACK_SUCCESS");
      const failed = run.steps.find((g) => g.type === "next")!.steps[0] as { retries: number; retryDelay?: string; errors?: unknown[] };
      expect({ retries: failed.retries, retryDelay: failed.retryDelay, attempts: failed.errors?.length }).toEqual({ retries: 1, retryDelay: "5000", attempts: 2 });

      // The start (which runs "first"), "second" and its retry, after the SDK's hand-over when it
      // takes the run over; every delivery carries the user's header once, and only its own
      // delivery headers.
      expect(deliveries.length).toBe(takeOver ? 4 : 3);
      for (const headers of deliveries) {
        expect(headers.get("x-tenant")).toBe("acme");
        expect(headers.get("upstash-message-id")).not.toContain(",");
        expect(headers.get("upstash-signature")).not.toContain(",");
        expect(headers.get("content-length")).not.toContain(",");
      }
      // The run's steps do not keep the delivery's own headers.
      for (const group of run.steps)
        for (const step of group.steps) {
          const names = Object.keys((step as { headers?: Record<string, string[]> }).headers ?? {}).map((n) => n.toLowerCase());
          expect(names.filter((n) => ["upstash-signature", "host", "content-length", "upstash-message-id"].includes(n))).toEqual([]);
        }
      const { messages } = await w.client.dlq.list({ filter: { workflowRunId } });
      expect(messages[0]).toMatchObject({ label: `rest-${name}`, maxRetries: 1 });
    });
  }
});

describe("DLQ resume and restart override the failed run's settings", () => {
  /** A run that failed into the DLQ (its second step always throws), its failure URL's calls counted. */
  async function failedRun(path: string) {
    const calls = { original: 0, deliveries: 0 };
    const failureUrl = w.route(`${path}/failure`, () => {
      calls.original++;
      return new Response("noted");
    });
    const url = w.serve(path, async (context) => {
      await context.run("first", () => 1);
      await context.run("second", () => {
        throw new Error("second breaks");
      });
    });
    const served = w.routeHandler(path)!;
    w.route(path, (request) => {
      calls.deliveries++;
      return served(request);
    });
    const { workflowRunId } = await w.client.trigger({ url, failureUrl, retries: 0, label: "original" });
    await w.flush();
    const { messages } = await w.client.dlq.list({ filter: { workflowRunId } });
    expect(messages).toHaveLength(1);
    expect(calls.original).toBe(1);
    return { dlqId: messages[0]!.dlqId, calls };
  }

  for (const action of ["resume", "restart"] as const) {
    test(`client.dlq.${action} with retries and flow control: the new run has them`, async () => {
      const { dlqId } = await failedRun(`/wf/sdk-${action}`);
      const started = await w.client.dlq[action]({ dlqId, retries: 2, flowControl: { key: `sdk-${action}`, parallelism: 1 } });
      await w.flush();
      const run = (await w.run(started.workflowRunId))!;
      expect(run).toMatchObject({ workflowState: "RUN_STARTED", flowControlKey: `sdk-${action}`, label: "original" });
      const retrying = run.steps.find((g) => g.type === "next")!.steps[0] as { retries: number; state: string };
      expect(retrying).toMatchObject({ retries: 2, state: "STEP_RETRY" });
      await w.client.cancel({ ids: [started.workflowRunId] });
    });

    test(`${action} with delay, retry delay, label and failure callback headers: the new run has them`, async () => {
      const { dlqId, calls } = await failedRun(`/wf/http-${action}`);
      let replaced = 0;
      const newFailureUrl = w.route(`/failure/replaced-${action}`, () => {
        replaced++;
        return new Response("noted");
      });
      const res = await w.svc.api(`/v2/workflows/dlq/${action}/${dlqId}`, {
        method: "POST",
        headers: {
          "Upstash-Delay": "30s",
          "Upstash-Retries": "1",
          "Upstash-Retry-Delay": "2000",
          "Upstash-Label": `again-${action}`,
          "Upstash-Failure-Callback": newFailureUrl,
        },
      });
      expect(res.status).toBe(200);
      const { workflowRunId } = (await res.json()) as { workflowRunId: string };
      const before = calls.deliveries;
      await w.flush();
      await w.advance(29_999);
      expect(calls.deliveries).toBe(before);
      await w.advance(1);
      expect(calls.deliveries).toBeGreaterThan(before);
      // The failing step's one retry comes 2 s after its failure.
      expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_STARTED");
      await w.advance(1_999);
      expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_STARTED");
      await w.advance(1);
      const run = (await w.run(workflowRunId))!;
      expect(run).toMatchObject({ workflowState: "RUN_FAILED", label: `again-${action}` });
      expect({ replaced, original: calls.original }).toEqual({ replaced: 1, original: 1 });
      const { messages } = await w.client.dlq.list({ filter: { label: `again-${action}` } });
      expect(messages.map((m) => m.workflowRunId)).toEqual([workflowRunId]);
    });
  }

  test("a bad override is refused with 400 and starts nothing", async () => {
    const { dlqId } = await failedRun("/wf/bad-override");
    const res = await w.svc.api(`/v2/workflows/dlq/resume/${dlqId}`, { method: "POST", headers: { "Upstash-Delay": "soon" } });
    expect(res.status).toBe(400);
    expect((await w.client.dlq.list({ filter: { label: "original" } })).messages.map((m) => m.dlqId)).toContain(dlqId);
  });
});
