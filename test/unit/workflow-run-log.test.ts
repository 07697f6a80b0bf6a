import { describe, expect, test } from "bun:test";
import type { RunRecord, StepEntry, StepError, Waiter } from "../../src/workflows/model.ts";
import { runLog, type RunLogFacts } from "../../src/workflows/run-log.ts";
import type { InvokedRun } from "../../src/workflows/step-logs.ts";
import { endRun, isActive } from "../../src/workflows/run-state.ts";

const run: RunRecord = {
  accountId: "acc",
  runId: "wfr_log",
  url: "http://app.test/wf",
  createdAt: 100,
  state: "RUN_STARTED",
  labels: ["red", "blue"],
  callerIp: "10.0.0.7",
  config: { retries: 2, retryDelayExpr: "1000", headers: [], flow: { key: "tenant-a", periodMs: 1000, parallelism: 2 } },
};

const encode = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A run's list, built in order: positions and creation times follow. */
function list() {
  const entries: StepEntry[] = [];
  const add = (messageId: string, body: unknown, overrides: Partial<StepEntry> = {}) => {
    const entry: StepEntry = {
      accountId: "acc",
      runId: run.runId,
      position: entries.length,
      messageId,
      callType: "step",
      url: run.url,
      method: "POST",
      body: encode(body),
      createdAt: 101 + entries.length,
      headers: [["Content-Type", "application/json"]],
      retries: 2,
      retryDelayExpr: "1000",
      state: "DELIVERED",
      ...overrides,
    };
    entries.push(entry);
    return entry;
  };
  return { entries, add };
}

const noFacts = (): RunLogFacts => ({ errors: new Map(), waiting: [], invoked: [] });
const result = (stepId: number, stepName: string, out: unknown, extra: Record<string, unknown> = {}) => ({
  stepId,
  stepName,
  stepType: "Run",
  out: JSON.stringify(out),
  concurrent: 1,
  ...extra,
});
const plan = (target: number, stepName: string, concurrent: number, stepType = "Run") => ({ stepId: 0, stepName, stepType, concurrent, targetStep: target });
const shape = (log: ReturnType<typeof runLog>) =>
  log.steps.map((g) => ({ type: g.type, steps: g.steps.map((s) => `${s.stepName ?? s.messageId}:${s.state}`) }));

describe("run log: steps in order", () => {
  test("the initial payload, results as the SDK stored them, and the undelivered message as `next` with its errors", () => {
    const { entries, add } = list();
    add("m0", "hello");
    add("m1", result(1, "step-1", { n: 1 }));
    add("m2", result(2, "step-2", "two"), { state: "RETRY", nextDeliveryAt: 5000 });
    const error: StepError = {
      error: "the destination answered 500",
      body: '{"error":"Error","message":"boom"}',
      headers: { "Upstash-Error-Step-Name": ["step-3"], "Upstash-Workflow-Sdk-Version": ["1"] },
      status: 500,
      time: 150,
    };
    const log = runLog(run, entries, { ...noFacts(), errors: new Map([["m2", [error]]]) });
    expect(log).toMatchObject({ workflowState: "RUN_STARTED", label: "red", labels: ["red", "blue"], workflowRunCallerIp: "10.0.0.7", flowControlKey: "tenant-a" });
    expect(log.steps).toEqual([
      {
        type: "sequential",
        steps: [
          {
            stepName: "init",
            stepType: "Initial",
            callType: "step",
            messageId: "m0",
            out: "hello",
            concurrent: 1,
            state: "STEP_SUCCESS",
            createdAt: 101,
            headers: { "Content-Type": ["application/json"] },
            retries: 2,
            retryDelay: "1000",
          },
        ],
      },
      // `out` is the text the step carries (its result as JSON), as the hosted log shows it.
      { type: "sequential", steps: [expect.objectContaining({ stepId: 1, stepName: "step-1", out: '{"n":1}', state: "STEP_SUCCESS", callType: "step" })] },
      { type: "sequential", steps: [expect.objectContaining({ stepId: 2, stepName: "step-2", out: '"two"' })] },
      // The SDK named the step that failed in its answer's headers.
      { type: "next", steps: [{ messageId: "m2", stepName: "step-3", state: "STEP_RETRY", retries: 2, retryDelay: "1000", nextDeliveryTime: 5000, errors: [error] }] },
    ]);
  });

  test("parallel branches: each shows in its plan step's place, under way until its result takes the place; a duplicate result counts once", () => {
    const { entries, add } = list();
    add("m0", "payload");
    add("p1", plan(1, "a", 3));
    add("p2", plan(2, "b", 3), { state: "CANCELED" });
    add("p3", plan(3, "c", 3), { state: "RETRY" });
    add("r2", result(2, "b", "B", { concurrent: 3 }));
    add("r1", result(1, "a", "A", { concurrent: 3 }));
    add("r1-again", result(1, "a", "A", { concurrent: 3 }));
    const log = runLog(run, entries, noFacts());
    expect(shape(log)).toEqual([
      { type: "sequential", steps: ["init:STEP_SUCCESS"] },
      { type: "parallel", steps: ["a:STEP_SUCCESS", "b:STEP_SUCCESS", "c:STEP_RETRY"] },
      // A plan step not yet delivered names the branch it runs.
      { type: "next", steps: ["b:STEP_CANCELED", "c:STEP_RETRY"] },
    ]);
    const branches = log.steps[1]!.steps;
    expect(branches[2]).toMatchObject({ stepId: 3, stepName: "c", messageId: "p3", concurrent: 3 });
    expect("out" in branches[2]!).toBe(false);
    expect(branches[0]).toMatchObject({ stepId: 1, messageId: "r1", out: '"A"' });
  });

  test("two parallel groups in a row stay two groups", () => {
    const { entries, add } = list();
    add("m0", "");
    add("p1", plan(1, "a", 2));
    add("p2", plan(2, "b", 2));
    add("r1", result(1, "a", 1, { concurrent: 2 }));
    add("r2", result(2, "b", 2, { concurrent: 2 }));
    add("p3", plan(3, "c", 2));
    add("p4", plan(4, "d", 2));
    expect(shape(runLog(run, entries, noFacts())).map((g) => g.steps)).toEqual([
      ["init:STEP_SUCCESS"],
      ["a:STEP_SUCCESS", "b:STEP_SUCCESS"],
      ["c:STEP_PROGRESS", "d:STEP_PROGRESS"],
    ]);
  });
});

describe("run log: the kinds of steps", () => {
  const callStep = { stepId: 1, stepName: "ask", stepType: "Call", concurrent: 1 };
  const callRequest = { callType: "toCallback" as const, url: "http://third.test/api", method: "PUT", headers: [["X-Key", "k"]] as Array<[string, string]>, details: { step: callStep } };
  const answer = { status: 201, header: { "X-Answer": ["yes"] }, body: b64("created"), sourceMessageId: "c1", retried: 0, maxRetries: 0 };

  test("a context.call on its way shows as the call step: toCallback while the third party is called, fromCallback with its answer", () => {
    const calling = list();
    calling.add("m0", "");
    calling.add("c1", '{"q":1}', { ...callRequest, state: "RETRY" });
    const onItsWay = runLog(run, calling.entries, noFacts()).steps[1]!.steps[0];
    expect(onItsWay).toMatchObject({
      stepId: 1,
      stepName: "ask",
      stepType: "Call",
      callType: "toCallback",
      messageId: "c1",
      state: "STEP_RETRY",
      callUrl: "http://third.test/api",
      callMethod: "PUT",
      callHeaders: { "X-Key": ["k"] },
      callBody: '{"q":1}',
    });
    expect(runLog(run, calling.entries, noFacts()).steps.at(-1)).toEqual({ type: "next", steps: [expect.objectContaining({ messageId: "c1", stepName: "ask", state: "STEP_RETRY" })] });

    calling.entries[1]!.state = "DELIVERED";
    calling.add("cb", answer, { callType: "fromCallback", state: "PENDING" });
    const answered = runLog(run, calling.entries, noFacts()).steps[1]!.steps[0];
    expect(answered).toMatchObject({
      callType: "fromCallback",
      messageId: "cb",
      state: "STEP_PROGRESS",
      callUrl: "http://third.test/api",
      callResponseStatus: 201,
      callResponseBody: "created",
      callResponseHeaders: { "X-Answer": ["yes"] },
    });
  });

  test("a finished call shows the request it made and the answer it got; the ending fields appear once ended", () => {
    const { entries, add } = list();
    add("m0", "");
    add("c1", '{"q":1}', callRequest);
    add("cb", answer, { callType: "fromCallback" });
    add("r1", { ...callStep, out: JSON.stringify({ status: 201, body: "created", header: { "X-Answer": ["yes"] } }) });
    const ended: RunRecord = { ...run, state: "RUN_SUCCESS", completedAt: 900, result: '"ok"', labels: undefined };
    const log = runLog(ended, entries, noFacts());
    expect(log.steps).toHaveLength(2);
    expect(log.steps[1]!.steps[0]).toMatchObject({
      stepType: "Call",
      callType: "step",
      messageId: "r1",
      state: "STEP_SUCCESS",
      callUrl: "http://third.test/api",
      callMethod: "PUT",
      callHeaders: { "X-Key": ["k"] },
      callBody: '{"q":1}',
      callResponseStatus: 201,
      callResponseBody: "created",
      callResponseHeaders: { "X-Answer": ["yes"] },
    });
    expect(log).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunCompletedAt: 900, workflowRunResponse: '"ok"' });
    expect("label" in log).toBe(false);
  });

  test("a wait under way shows its event and deadline; the event that came shows its data, the deadline it had and whether it timed out", () => {
    const waitStep = { stepId: 1, stepName: "approval", stepType: "Wait", concurrent: 1 };
    const waiter: Waiter = {
      accountId: "acc",
      runId: run.runId,
      eventId: "evt_1",
      url: run.url,
      createdAt: 200,
      deadline: 3_600_200,
      headers: [],
      timeoutUrl: run.url,
      timeoutHeaders: {},
      timeout: "1h",
      step: waitStep,
    };
    const waiting = list();
    waiting.add("m0", "");
    expect(runLog(run, waiting.entries, { ...noFacts(), waiting: [waiter] }).steps[1]).toEqual({
      type: "sequential",
      steps: [
        {
          stepId: 1,
          stepName: "approval",
          stepType: "Wait",
          callType: "step",
          concurrent: 1,
          state: "STEP_PROGRESS",
          createdAt: 200,
          waitEventId: "evt_1",
          waitTimeoutDuration: "1h",
          waitTimeoutDeadline: 3_600_200,
          waitTimeout: false,
        },
      ],
    });
    waiting.add("e1", { ...waitStep, waitEventId: "evt_1", timeout: "1h", out: b64('{"approved":true}'), waitTimeout: false }, { details: { waitTimeoutDeadline: 3_600_200 } });
    expect(runLog(run, waiting.entries, noFacts()).steps[1]!.steps[0]).toMatchObject({
      stepName: "approval",
      state: "STEP_SUCCESS",
      out: '{"approved":true}',
      waitEventId: "evt_1",
      waitTimeout: false,
      waitTimeoutDuration: "1h",
      waitTimeoutDeadline: 3_600_200,
    });
  });

  test("an invoke shows the run it started, under way and once its result came back", () => {
    const invokeStep = { stepId: 1, stepName: "call-child", stepType: "Invoke", concurrent: 1 };
    const child: InvokedRun = {
      runId: "wfr_child",
      url: "http://app.test/child",
      createdAt: 300,
      step: invokeStep,
      messageId: "child-start",
      body: '{"x":21}',
      headers: { "X-Tenant": ["acme"] },
    };
    const invoked = {
      invokedWorkflowRunId: "wfr_child",
      invokedWorkflowUrl: "http://app.test/child",
      invokedWorkflowCreatedAt: 300,
      invokedWorkflowRunBody: '{"x":21}',
      invokedWorkflowRunHeaders: { "X-Tenant": ["acme"] },
    };
    const { entries, add } = list();
    add("m0", "");
    expect(runLog(run, entries, { ...noFacts(), invoked: [child] }).steps[1]!.steps[0]).toEqual({
      stepId: 1,
      stepName: "call-child",
      stepType: "Invoke",
      callType: "step",
      messageId: "child-start",
      concurrent: 1,
      state: "STEP_PROGRESS",
      createdAt: 300,
      ...invoked,
    });
    add("r1", { ...invokeStep, out: JSON.stringify({ body: '{"doubled":42}' }) });
    const done = runLog(run, entries, { ...noFacts(), invoked: [child] });
    expect(done.steps).toHaveLength(2);
    expect(done.steps[1]!.steps[0]).toMatchObject({ messageId: "r1", state: "STEP_SUCCESS", out: '{"body":"{\\"doubled\\":42}"}', ...invoked });
  });

  test("the failure function shows the errors of its call", () => {
    const error: StepError = { error: "the destination answered 500", body: "nope", headers: {}, status: 500, time: 7 };
    const failed: RunRecord = {
      ...run,
      state: "RUN_FAILED",
      failureFunction: { messageId: "f1", url: run.url, state: "CALLBACK_FAIL", dlqId: "d1", failStatus: 500, failResponse: "boom", failHeaders: {} },
    };
    expect(runLog(failed, list().entries, { ...noFacts(), errors: new Map([["f1", [error]]]) }).failureFunction).toMatchObject({ state: "CALLBACK_FAIL", errors: [error] });
  });
});

describe("run states", () => {
  test("a started run ends once, in the state its ending names; an ended run stays as it is", () => {
    expect(endRun("RUN_STARTED", "finished")).toBe("RUN_SUCCESS");
    expect(endRun("RUN_STARTED", "cancelled")).toBe("RUN_CANCELED");
    expect(endRun("RUN_STARTED", "failed")).toBe("RUN_FAILED");
    for (const ended of ["RUN_SUCCESS", "RUN_CANCELED", "RUN_FAILED"] as const) {
      expect(isActive(ended)).toBe(false);
      expect(endRun(ended, "cancelled")).toBeNull();
    }
    expect(isActive("RUN_STARTED")).toBe(true);
  });
});
