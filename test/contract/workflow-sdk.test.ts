/**
 * The official workflow SDK (`@upstash/workflow`), unchanged, runs durable functions on svcd in
 * the hosted dialect: its `serve` endpoints live in a local Bun.serve app, its `Client` triggers,
 * inspects and cancels runs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createWorkflow, serveMany } from "@upstash/workflow/nextjs";
import { serve, type WorkflowContext } from "@upstash/workflow";
import { waitUntil } from "../helpers/wait.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld();
});
afterAll(async () => {
  await w?.stop();
});

describe("workflow runs on svcd", () => {
  test("sequential steps run once each, in order, with each result passed on; the run ends with its result", async () => {
    const ran: string[] = [];
    const url = w.serve<{ n: number }>("/wf/sequential", async (context) => {
      const a = await context.run("add-one", () => {
        ran.push("add-one");
        return context.requestPayload.n + 1;
      });
      const b = await context.run("double", () => {
        ran.push("double");
        return a * 2;
      });
      const c = await context.run("describe", () => {
        ran.push("describe");
        return `result ${b}`;
      });
      return c;
    });
    const { workflowRunId } = await w.client.trigger({ url, body: { n: 4 } });
    await w.flush();
    expect(ran).toEqual(["add-one", "double", "describe"]);
    const run = await w.run(workflowRunId);
    expect(run).toMatchObject({ workflowRunId, workflowUrl: url, workflowState: "RUN_SUCCESS", workflowRunResponse: '"result 10"' });
    const names = run!.steps.filter((g) => g.type !== "next").map((g) => g.steps[0]!.stepName);
    expect(names).toEqual(["init", "add-one", "double", "describe"]);
    // `out` is the step's result as JSON text, as the hosted log shows it.
    expect((run!.steps[1]!.steps[0] as { out?: unknown }).out).toBe("5");
  });

  test("context.call reaches a local endpoint with method, headers and body; its status, headers and body reach the workflow", async () => {
    const seen: Array<{ method: string; key: string | null; body: string }> = [];
    const third = w.route("/third-party", async (req) => {
      seen.push({ method: req.method, key: req.headers.get("x-key"), body: await req.text() });
      return Response.json({ accepted: true }, { status: 201, headers: { "x-answer": "42" } });
    });
    const answers: unknown[] = [];
    const url = w.serve("/wf/call", async (context) => {
      const response = await context.call("ask", { url: third, method: "PUT", body: JSON.stringify({ q: 1 }), headers: { "x-key": "k1" } });
      await context.run("record", () => {
        answers.push(response);
      });
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(seen).toEqual([{ method: "PUT", key: "k1", body: '{"q":1}' }]);
    expect(answers).toHaveLength(1);
    const answer = answers[0] as { status: number; body: unknown; header: Record<string, string[]> };
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ accepted: true });
    expect(new Headers(Object.entries(answer.header).map(([k, v]): [string, string] => [k, v[0]!])).get("x-answer")).toBe("42");
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
  });

  test("parallel steps with Promise.all run each branch once and join their results", async () => {
    const ran: string[] = [];
    const url = w.serve("/wf/parallel", async (context) => {
      const [a, b, c] = await Promise.all([
        context.run("a", () => (ran.push("a"), 1)),
        context.run("b", () => (ran.push("b"), 20)),
        context.run("c", () => (ran.push("c"), 300)),
      ]);
      return await context.run("sum", () => (ran.push("sum"), a + b + c));
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(ran.filter((r) => r !== "sum").sort()).toEqual(["a", "b", "c"]);
    expect(ran.at(-1)).toBe("sum");
    const run = (await w.run(workflowRunId))!;
    expect(run.workflowState).toBe("RUN_SUCCESS");
    expect(run.workflowRunResponse).toBe("321");
    const parallel = run.steps.find((g) => g.type === "parallel")!;
    expect(parallel.steps.map((s) => s.stepName).sort()).toEqual(["a", "b", "c"]);
  });

  test("a step that throws with retries 0 runs the failure function once with the initial payload; the run shows failed", async () => {
    const failures: Array<{ payload: unknown; status: number; response: string }> = [];
    let attempts = 0;
    const url = w.serve<{ order: number }>(
      "/wf/failing",
      async (context) => {
        await context.run("fine", () => "ok");
        await context.run("boom", () => {
          attempts++;
          throw new Error("kaboom");
        });
      },
      {
        failureFunction: ({ context, failStatus, failResponse }) => {
          failures.push({ payload: context.requestPayload, status: failStatus, response: failResponse });
        },
      },
    );
    const { workflowRunId } = await w.client.trigger({ url, body: { order: 7 }, retries: 0 });
    await w.flush();
    expect(attempts).toBe(1);
    expect(failures).toEqual([{ payload: { order: 7 }, status: 500, response: "kaboom" }]);
    const run = (await w.run(workflowRunId))!;
    expect(run.workflowState).toBe("RUN_FAILED");
    expect(run.dlqId).toBeString();
    expect(run.failureFunction).toMatchObject({ state: "CALLBACK_SUCCESS", failStatus: 500, failResponse: "kaboom", dlqId: run.dlqId });
    const next = run.steps.find((g) => g.type === "next")!;
    expect(next.steps[0]).toMatchObject({ state: "STEP_FAILED", retries: 0 });
  });

  test("context.cancel() ends the run as cancelled; nothing after it runs", async () => {
    const ran: string[] = [];
    const url = w.serve("/wf/cancel-self", async (context) => {
      await context.run("first", () => ran.push("first"));
      await context.cancel();
      await context.run("never", () => ran.push("never"));
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(ran).toEqual(["first"]);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_CANCELED");
  });

  test("waitForEvent is answered by notify: the waiter is listed, the event data reaches the run", async () => {
    const results: unknown[] = [];
    const url = w.serve<{ id: string }>("/wf/approval", async (context) => {
      const { eventData, timeout } = await context.waitForEvent("wait-approval", `approval-${context.requestPayload.id}`, { timeout: "1h" });
      await context.run("record", () => {
        results.push({ eventData, timeout });
      });
    });
    const { workflowRunId } = await w.client.trigger({ url, body: { id: "a1" } });
    await w.flush();
    const waiters = await w.client.getWaiters({ eventId: "approval-a1" });
    expect(waiters).toHaveLength(1);
    expect(waiters[0]!.url).toBe(url);
    expect(results).toEqual([]);
    const notified = await w.client.notify({ eventId: "approval-a1", eventData: { approved: true } });
    expect(notified).toHaveLength(1);
    expect(notified[0]!.messageId).toMatch(/^msg_/);
    expect(notified[0]).toMatchObject({ error: "", workflowRunId });
    await w.flush();
    expect(results).toEqual([{ eventData: { approved: true }, timeout: false }]);
    expect(await w.client.getWaiters({ eventId: "approval-a1" })).toEqual([]);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
  });

  test("context.invoke starts a second workflow and gets its result back", async () => {
    const ran: string[] = [];
    const child = createWorkflow(async (context: WorkflowContext<{ x: number }>) => {
      const doubled = await context.run("double", () => (ran.push("child"), context.requestPayload.x * 2));
      return { doubled };
    });
    const parent = createWorkflow(async (context: WorkflowContext) => {
      const { body, isFailed, isCanceled } = await context.invoke("call-child", { workflow: child, body: { x: 21 } });
      await context.run("record", () => ran.push(`parent got ${JSON.stringify(body)} failed=${isFailed} canceled=${isCanceled}`));
    });
    const { POST } = serveMany({ parent, child }, { qstashClient: w.qstash, receiver: w.receiver });
    w.route("/wf/many/parent", POST);
    w.route("/wf/many/child", POST);
    const { workflowRunId } = await w.client.trigger({ url: `${w.base}/wf/many/parent` });
    await w.flush();
    expect(ran).toEqual(["child", 'parent got {"doubled":42} failed=false canceled=false']);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
    const { runs } = await w.client.logs({ workflowUrl: `${w.base}/wf/many/child` });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ workflowState: "RUN_SUCCESS", invoker: { workflowRunId, workflowUrl: `${w.base}/wf/many/parent` } });
  });

  test("client.logs() shows each run's state and steps, filtered by state and run id", async () => {
    const url = w.serve("/wf/logged", async (context) => {
      await context.run("only-step", () => "done");
      await context.waitForEvent("hold", "logs-hold", { timeout: "1h" });
    });
    const { workflowRunId } = await w.client.trigger({ url, body: "payload", label: "logs-test" });
    await w.flush();
    const running = await w.run(workflowRunId);
    expect(running).toMatchObject({ workflowRunId, workflowUrl: url, workflowState: "RUN_STARTED", label: "logs-test" });
    expect(running!.workflowRunCompletedAt).toBeUndefined();
    expect(running!.steps[0]).toMatchObject({ type: "sequential", steps: [{ stepName: "init", stepType: "Initial", out: "payload", state: "STEP_SUCCESS" }] });
    expect(running!.steps[1]).toMatchObject({ type: "sequential", steps: [{ stepName: "only-step", stepType: "Run", out: '"done"', state: "STEP_SUCCESS" }] });
    // The wait under way shows too, with its event and deadline.
    expect(running!.steps[2]).toMatchObject({
      type: "sequential",
      steps: [{ stepName: "hold", stepType: "Wait", state: "STEP_PROGRESS", waitEventId: "logs-hold", waitTimeoutDuration: "1h", waitTimeout: false }],
    });
    const wait = running!.steps[2]!.steps[0] as { createdAt: number; waitTimeoutDeadline: number };
    expect(wait.waitTimeoutDeadline - wait.createdAt).toBe(3_600_000);
    const started = await w.client.logs({ filter: { state: "RUN_STARTED", label: "logs-test" } });
    expect(started.runs.map((r) => r.workflowRunId)).toEqual([workflowRunId]);
    await w.client.cancel({ ids: workflowRunId });
    const ended = await w.run(workflowRunId);
    expect(ended).toMatchObject({ workflowState: "RUN_CANCELED", workflowRunCompletedAt: expect.any(Number) });
    expect((await w.client.logs({ filter: { state: "RUN_STARTED", label: "logs-test" } })).runs).toEqual([]);
  });

  test("client.cancel by id cancels once; by URL prefix or exact URL cancels the matching running runs", async () => {
    const ran: string[] = [];
    const slow = (name: string) =>
      w.serve(`/wf/cancel/${name}`, async (context) => {
        await context.sleep("long-nap", 3600);
        await context.run("after-nap", () => ran.push(name));
      });
    const a = slow("a");
    const b = slow("b");
    const c = slow("c");
    const runA = await w.client.trigger({ url: a });
    const runB = await w.client.trigger({ url: b });
    const runC = await w.client.trigger({ url: c });
    await w.flush();
    expect(await w.client.cancel(runA.workflowRunId)).toEqual({ cancelled: 1 });
    expect(await w.client.cancel(runA.workflowRunId)).toEqual({ cancelled: 0 });
    expect(await w.client.cancel({ filter: { workflowUrl: `${w.base}/wf/cancel/` } })).toEqual({ cancelled: 0 });
    expect(await w.client.cancel({ filter: { workflowUrl: b } })).toEqual({ cancelled: 1 });
    expect(await w.client.cancel({ urlStartingWith: `${w.base}/wf/cancel/` })).toEqual({ cancelled: 1 });
    for (const { workflowRunId } of [runA, runB, runC]) expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_CANCELED");
    // Each run's sleeping step was cancelled with it: nothing is left to deliver.
    for (const url of [a, b, c]) {
      const { events } = await (await w.svc.api(`/v2/logs?state=CANCELED&url=${encodeURIComponent(url)}`)).json();
      expect(events).toHaveLength(1);
    }
    expect(ran).toEqual([]);
  });

  test("client.cancel by filters of several values cancels only the matching runs; a filter svcd does not know is refused, never ignored", async () => {
    const url = w.serve("/wf/cancel-labels", async (context) => {
      await context.sleep("long-nap", 3600);
    });
    const red = await w.client.trigger({ url, label: "red" });
    const green = await w.client.trigger({ url, label: "green" });
    const blue = await w.client.trigger({ url, label: "blue" });
    await w.flush();
    const typo = await w.svc.api(`/v2/workflows/runs?lable=red`, { method: "DELETE" });
    expect(typo.status).toBe(400);
    expect((await typo.json()).error).toContain("lable");
    expect(await w.client.cancel({ filter: { label: ["red", "blue"], host: "127.0.0.1" } })).toEqual({ cancelled: 2 });
    const states = async () => Promise.all([red, green, blue].map(async ({ workflowRunId }) => (await w.run(workflowRunId))!.workflowState));
    expect(await states()).toEqual(["RUN_CANCELED", "RUN_STARTED", "RUN_CANCELED"]);
    // Logs find a run by one of its messages.
    const { messageId } = (await w.run(green.workflowRunId))!.steps[0]!.steps[0]!;
    expect((await w.client.logs({ filter: { messageId } })).runs.map((r) => r.workflowRunId)).toEqual([green.workflowRunId]);
    expect(await w.client.cancel({ filter: { workflowUrl: url } })).toEqual({ cancelled: 1 });
  });

  test("the workflow DLQ: list with run fields, resume from the failed step, restart from the start, delete; a failure function that succeeded is not called again", async () => {
    let broken = true;
    const ran: string[] = [];
    let failureCalls = 0;
    const url = w.serve<{ job: string }>(
      "/wf/dlq",
      async (context) => {
        await context.run("prepare", () => ran.push(`prepare ${context.requestPayload.job}`));
        await context.run("fragile", () => {
          ran.push(`fragile ${context.requestPayload.job}`);
          if (broken) throw new Error("still broken");
        });
      },
      { failureFunction: () => void failureCalls++ },
    );
    const first = await w.client.trigger({ url, body: { job: "one" }, retries: 0 });
    const second = await w.client.trigger({ url, body: { job: "two" }, retries: 0 });
    await w.flush();
    expect(failureCalls).toBe(2);
    const { messages } = await w.client.dlq.list({ filter: { workflowUrl: url } });
    const entry = (id: string) => messages.find((m) => m.workflowRunId === id)!;
    expect(messages).toHaveLength(2);
    expect(entry(first.workflowRunId)).toMatchObject({
      workflowUrl: url,
      workflowCreatedAt: expect.any(Number),
      responseStatus: 500,
      failureCallback: url,
      failureCallbackInfo: { state: "CALLBACK_SUCCESS", responseStatus: 200 },
    });

    broken = false;
    ran.length = 0;
    const resumed = await w.client.dlq.resume({ dlqId: entry(first.workflowRunId).dlqId });
    expect(resumed.workflowRunId).not.toBe(first.workflowRunId);
    await w.flush();
    // Resumed from the failed step: the step before it is not run again.
    expect(ran).toEqual(["fragile one"]);
    expect((await w.run(resumed.workflowRunId))!.workflowState).toBe("RUN_SUCCESS");

    // Its failure function succeeded: it is not called again (workflow-sdk-failures.test.ts has one that failed).
    const retried = await w.client.dlq.retryFailureFunction({ dlqId: entry(second.workflowRunId).dlqId }).catch((error: unknown) => error);
    expect((retried as { status?: number }).status).toBe(400);
    expect(failureCalls).toBe(2);

    ran.length = 0;
    const restarted = await w.client.dlq.restart({ dlqId: entry(second.workflowRunId).dlqId, retries: 1 });
    await w.flush();
    expect(ran).toEqual(["prepare two", "fragile two"]);
    expect((await w.run(restarted.workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
    // Both entries left the DLQ when their runs were resumed and restarted.
    expect((await w.client.dlq.list({ filter: { workflowUrl: url } })).messages).toEqual([]);

    broken = true;
    const third = await w.client.trigger({ url, body: { job: "three" }, retries: 0 });
    await w.flush();
    const [left] = (await w.client.dlq.list({ filter: { workflowRunId: third.workflowRunId } })).messages;
    expect(await w.client.dlq.delete(left!.dlqId)).toEqual({ deleted: 1 });
    expect((await w.client.dlq.list({ filter: { workflowRunId: third.workflowRunId } })).messages).toEqual([]);
  });

  test("a step above a plan limit (a sleep longer than the plan's maximum delay) is refused with 412: the run fails at once", async () => {
    let attempts = 0;
    const url = w.serve("/wf/too-long", async (context) => {
      await context.run("count", () => void attempts++);
      await context.sleep("forever", "400d");
    });
    const { workflowRunId } = await w.client.trigger({ url, retries: 3 });
    await w.flush();
    const run = (await w.run(workflowRunId))!;
    expect(run.workflowState).toBe("RUN_FAILED");
    // The SDK turned the 412 into a non-retryable error: the failing delivery was not retried.
    expect(attempts).toBe(1);
    const next = run.steps.find((g) => g.type === "next")!;
    expect(next.steps[0]).toMatchObject({ state: "STEP_FAILED" });
  });

  test("a delivery answered only after a later step failed the run is recorded as delivered, not cancelled", async () => {
    // The trigger's delivery publishes the first step, which fails the run (412) before the
    // trigger's own answer arrives: that attempt was at the endpoint and is not disowned.
    const { handler } = serve(
      async (context) => {
        await context.run("count", () => 1);
        await context.sleep("forever", "400d");
      },
      { qstashClient: w.qstash, receiver: w.receiver, env: {} },
    );
    let deliveries = 0;
    let runId = "";
    const url = w.route("/wf/late-answer", async (request) => {
      const first = ++deliveries === 1;
      const response = await handler(request);
      if (first) await waitUntil(async () => (await w.run(runId))?.workflowState === "RUN_FAILED", { what: "the run to fail" });
      return response;
    });
    runId = (await w.client.trigger({ url, retries: 0 })).workflowRunId;
    await w.flush();
    const run = (await w.run(runId))!;
    const init = run.steps[0]!.steps[0]!;
    const next = run.steps.find((g) => g.type === "next")!;
    // Only the step that failed is left undelivered; the trigger's message was delivered.
    expect(next.steps.map((step) => step.state)).toEqual(["STEP_FAILED"]);
    expect(next.steps[0]!.messageId).not.toBe(init.messageId);
    const { logs } = (await (await w.svc.api(`/v2/logs?messageId=${init.messageId}`)).json()) as { logs: Array<{ state: string }> };
    expect(logs[0]!.state).toBe("DELIVERED");
  });
});
