/**
 * `client.logs()` field by field, as the workflow SDK's types (`WorkflowRunLog`, `StepLog`) and
 * the hosted API's examples declare them: every kind of step with its own fields, steps under
 * way, and the `next` group of a step that keeps failing. On the manual clock, so a run can be
 * looked at while it sleeps, retries or waits.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, serveMany } from "@upstash/workflow/nextjs";
import type { StepLog, WorkflowContext, WorkflowRunLog } from "@upstash/workflow";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld({ config: { clock: "manual" } });
});
afterAll(async () => {
  await w?.stop();
});

/** The run's steps by name (the last log of each), and its `next` group. */
function stepsOf(run: WorkflowRunLog) {
  const byName = new Map<string, StepLog>();
  for (const group of run.steps) if (group.type !== "next") for (const step of group.steps) byName.set(step.stepName, step);
  // `nextDeliveryTime` is in the hosted API's schema, not yet in the SDK's type of `next`.
  const next: Array<Record<string, unknown>> = run.steps.find((g) => g.type === "next")?.steps ?? [];
  return { byName, next, shape: run.steps.map((g) => `${g.type}:${g.steps.map((s) => s.stepName ?? "?").join("+")}`) };
}

describe("client.logs(), field by field", () => {
  test("every kind of step shows the fields of its kind: run, parallel, sleep, call, wait for event, invoke", async () => {
    const third = w.route("/third/echo", async (request) =>
      Response.json({ echoed: await request.text() }, { status: 201, headers: { "x-answer": "42" } }),
    );
    const child = createWorkflow(async (context: WorkflowContext<{ x: number }>) => context.run("double", () => context.requestPayload.x * 2));
    const parent = createWorkflow(async (context: WorkflowContext<{ order: string }>) => {
      await context.run("prepare", () => "ready");
      await Promise.all([context.run("left", () => 1), context.run("right", () => 2)]);
      await context.sleep("nap", 60);
      await context.call("ask", { url: third, method: "PUT", body: '{"q":1}', headers: { "x-key": "k1" } });
      await context.waitForEvent("approval", "evt-logs-kinds", { timeout: "1h" });
      return await context.invoke("delegate", { workflow: child, body: { x: 21 }, headers: { "x-tenant": "acme" } });
    });
    const { POST } = serveMany({ parent, child }, { qstashClient: w.qstash, receiver: w.receiver });
    w.route("/wf/kinds/parent", POST);
    w.route("/wf/kinds/child", POST);
    const url = `${w.base}/wf/kinds/parent`;
    const { workflowRunId } = await w.client.trigger({ url, body: { order: "o-1" }, label: "kinds" });
    await w.flush();

    // Asleep: the nap is handed in, its delivery (the step after it) is under way.
    const asleep = stepsOf((await w.run(workflowRunId))!);
    expect(asleep.shape).toEqual(["sequential:init", "sequential:prepare", "parallel:left+right", "sequential:nap", "next:?"]);
    expect(asleep.byName.get("nap")).toMatchObject({ stepType: "SleepFor", sleepFor: 60, state: "STEP_SUCCESS", callType: "step" });
    expect(asleep.next).toEqual([{ messageId: asleep.byName.get("nap")!.messageId, state: "STEP_PROGRESS", retries: 3 }]);

    // Waiting for the event: the call is done, the wait shows with its deadline.
    await w.advance(60_000);
    const waiting = await w.run(workflowRunId);
    const { byName, shape } = stepsOf(waiting!);
    expect(shape).toEqual(["sequential:init", "sequential:prepare", "parallel:left+right", "sequential:nap", "sequential:ask", "sequential:approval"]);
    const init = byName.get("init")!;
    expect(init).toEqual({
      stepName: "init",
      stepType: "Initial",
      callType: "step",
      messageId: expect.stringMatching(/^msg_/),
      out: '{"order":"o-1"}',
      concurrent: 1,
      state: "STEP_SUCCESS",
      createdAt: expect.any(Number),
      headers: expect.objectContaining({ "Upstash-Workflow-Sdk-Version": ["1"] }),
      retries: 3,
    });
    expect(byName.get("prepare")).toMatchObject({ stepId: 1, stepType: "Run", out: '"ready"', concurrent: 1, state: "STEP_SUCCESS" });
    expect(byName.get("left")).toMatchObject({ stepType: "Run", out: "1", concurrent: 2, state: "STEP_SUCCESS" });
    expect(byName.get("right")).toMatchObject({ stepType: "Run", out: "2", concurrent: 2, state: "STEP_SUCCESS" });
    expect(byName.get("ask")).toMatchObject({
      stepType: "Call",
      callType: "step",
      state: "STEP_SUCCESS",
      callUrl: third,
      callMethod: "PUT",
      callHeaders: expect.objectContaining({ "X-Key": ["k1"] }),
      callBody: '{"q":1}',
      callResponseStatus: 201,
      callResponseBody: JSON.stringify({ echoed: '{"q":1}' }),
      callResponseHeaders: expect.objectContaining({ "X-Answer": ["42"] }),
    });
    const wait = byName.get("approval")!;
    const now = await w.now();
    expect(wait).toMatchObject({ stepType: "Wait", state: "STEP_PROGRESS", waitEventId: "evt-logs-kinds", waitTimeoutDuration: "1h", waitTimeout: false });
    expect(wait.waitTimeoutDeadline).toBe(now + 3_600_000);

    // Notified: the event's data is the wait's output; the invoked run shows in the invoke step.
    await w.client.notify({ eventId: "evt-logs-kinds", eventData: { approved: true } });
    await w.flush();
    const done = (await w.run(workflowRunId))!;
    const response = JSON.stringify({ body: 42, isFailed: false, isCanceled: false });
    expect(done).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: response, label: "kinds", labels: ["kinds"] });
    const finished = stepsOf(done);
    expect(finished.next).toEqual([]);
    expect(finished.byName.get("approval")).toMatchObject({
      state: "STEP_SUCCESS",
      out: '{"approved":true}',
      waitEventId: "evt-logs-kinds",
      waitTimeout: false,
      waitTimeoutDuration: "1h",
      waitTimeoutDeadline: now + 3_600_000,
    });
    const { runs: children } = await w.client.logs({ workflowUrl: `${w.base}/wf/kinds/child` });
    expect(children).toHaveLength(1);
    expect(children[0]!.invoker).toEqual({ workflowRunId, workflowUrl: url, workflowRunCreatedAt: done.workflowRunCreatedAt });
    expect(finished.byName.get("delegate")).toMatchObject({
      stepType: "Invoke",
      state: "STEP_SUCCESS",
      out: JSON.stringify({ body: "42", isFailed: false, isCanceled: false }),
      invokedWorkflowRunId: children[0]!.workflowRunId,
      invokedWorkflowUrl: `${w.base}/wf/kinds/child`,
      invokedWorkflowCreatedAt: children[0]!.workflowRunCreatedAt,
      invokedWorkflowRunBody: '{"x":21}',
      invokedWorkflowRunHeaders: expect.objectContaining({ "X-Tenant": ["acme"] }),
    });
  });

  test("a call on its way shows as the call step (toCallback) with its request; `next` names it", async () => {
    let down = true;
    const third = w.route("/third/flaky", () => (down ? new Response("not yet", { status: 503 }) : new Response("fine")));
    const url = w.serve("/wf/logs-call", async (context) => {
      const { body } = await context.call("ask-flaky", { url: third, method: "POST", body: "ping", retries: 1, retryDelay: "60000" });
      return body;
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    const calling = stepsOf((await w.run(workflowRunId))!);
    expect(calling.byName.get("ask-flaky")).toMatchObject({
      stepId: 1,
      stepType: "Call",
      callType: "toCallback",
      state: "STEP_RETRY",
      callUrl: third,
      callMethod: "POST",
      callBody: "ping",
    });
    expect(calling.next).toEqual([
      expect.objectContaining({
        stepName: "ask-flaky",
        state: "STEP_RETRY",
        retries: 1,
        retryDelay: "60000",
        nextDeliveryTime: (await w.now()) + 60_000,
        errors: [expect.objectContaining({ status: 503, body: "not yet", error: expect.stringContaining("503") })],
      }),
    ]);
    down = false;
    await w.advance(60_000);
    const done = stepsOf((await w.run(workflowRunId))!);
    expect(done.byName.get("ask-flaky")).toMatchObject({ callType: "step", state: "STEP_SUCCESS", callResponseStatus: 200, callResponseBody: "fine", callUrl: third });
    expect(done.next).toEqual([]);
  });

  test("a step that keeps failing: `next` shows its errors with the answer's headers, the step the SDK named, when it is tried again; cancelled, STEP_CANCELED", async () => {
    const url = w.serve("/wf/logs-retry", async (context) => {
      await context.run("fine", () => "ok");
      await context.run("flaky", () => {
        throw new Error("not today");
      });
    });
    const { workflowRunId } = await w.client.trigger({ url, retries: 3, retryDelay: "30000" });
    await w.flush();
    const retrying = await w.run(workflowRunId);
    const { next } = stepsOf(retrying!);
    expect(next).toEqual([
      {
        messageId: expect.stringMatching(/^msg_/),
        stepName: "flaky",
        state: "STEP_RETRY",
        retries: 3,
        retryDelay: "30000",
        nextDeliveryTime: (await w.now()) + 30_000,
        errors: [
          {
            error: expect.stringContaining("500"),
            body: expect.stringContaining("not today"),
            headers: expect.objectContaining({ "Upstash-Error-Step-Name": ["flaky"], "Upstash-Workflow-Sdk-Version": ["1"] }),
            status: 500,
            time: expect.any(Number),
          },
        ],
      },
    ]);
    expect(await w.client.cancel({ ids: workflowRunId })).toEqual({ cancelled: 1 });
    const cancelled = (await w.run(workflowRunId))!;
    expect(cancelled).toMatchObject({ workflowState: "RUN_CANCELED", workflowRunCompletedAt: expect.any(Number) });
    expect(stepsOf(cancelled).next).toEqual([expect.objectContaining({ stepName: "flaky", state: "STEP_CANCELED", errors: [expect.objectContaining({ status: 500 })] })]);
  });

  test("a run that has ended lists no step still to come, even before svcd has the answers of the deliveries that ended it", async () => {
    // Read from inside the app: once the SDK's handler has returned, the run's end (its DELETE)
    // is committed, and svcd cannot have this delivery's answer yet: the window is hit every time.
    const seen: Array<{ workflowState: string; shape: string[] }> = [];
    let runId = "";
    const ending = async (path: string, fn: (context: WorkflowContext<{ name: string }>) => Promise<unknown>) => {
      const { POST } = serveMany({ fn: createWorkflow(fn) }, { qstashClient: w.qstash, receiver: w.receiver });
      w.route(`${path}/fn`, async (request) => {
        const answer = await POST(request);
        const log = runId ? await w.run(runId) : undefined;
        if (log) seen.push({ workflowState: log.workflowState, shape: stepsOf(log).shape });
        return answer;
      });
      ({ workflowRunId: runId } = await w.client.trigger({ url: `${w.base}${path}/fn`, body: { name: "ada" } }));
      await w.flush();
      await w.advance(60_000);
      const ended = seen.filter((s) => s.workflowState !== "RUN_STARTED");
      seen.length = 0;
      runId = "";
      return ended;
    };

    const sequential = await ending("/wf/ended/sequential", async (context: WorkflowContext<{ name: string }>) => {
      const greeting = await context.run("greet", () => `hello ${context.requestPayload.name}`);
      await context.sleep("pause", 60);
      return await context.run("shout", () => greeting.toUpperCase());
    });
    expect(sequential.length).toBeGreaterThan(0);
    const shout = ["sequential:init", "sequential:greet", "sequential:pause", "sequential:shout"];
    for (const s of sequential) expect(s).toEqual({ workflowState: "RUN_SUCCESS", shape: shout });

    const parallel = await ending("/wf/ended/parallel", async (context: WorkflowContext<{ name: string }>) => {
      await context.sleep("pause", 60);
      return await Promise.all([context.run("left", () => 1), context.run("right", () => 2)]);
    });
    expect(parallel.length).toBeGreaterThan(0);
    const both = ["sequential:init", "sequential:pause", "parallel:left+right"];
    for (const s of parallel) expect(s).toEqual({ workflowState: "RUN_SUCCESS", shape: both });
  });
});
