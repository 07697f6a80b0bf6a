import { describe, expect, test } from "bun:test";
import type { RunRecord, StepEntry } from "../../src/workflows/model.ts";
import { runLog, type DeliveryStatus } from "../../src/workflows/run-log.ts";
import { endRun, isActive } from "../../src/workflows/run-state.ts";

const run: RunRecord = {
  accountId: "acc",
  runId: "wfr_log",
  url: "http://app.test/wf",
  createdAt: 100,
  state: "RUN_STARTED",
  labels: ["red", "blue"],
  config: { retries: 2, retryDelayExpr: "1000", headers: [] },
};

let position = 0;
function entry(messageId: string, body: unknown, overrides: Partial<StepEntry> = {}): StepEntry {
  return {
    accountId: "acc",
    runId: run.runId,
    position: position++,
    messageId,
    callType: "step",
    url: run.url,
    method: "POST",
    body: new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body)),
    createdAt: 100 + position,
    headers: [["Content-Type", "application/json"]],
    retries: 2,
    retryDelayExpr: "1000",
    ...overrides,
  };
}

const delivered: DeliveryStatus = { state: "DELIVERED", errors: [] };
const result = (stepId: number, stepName: string, out: unknown, concurrent = 1) => ({
  stepId,
  stepName,
  stepType: "Run",
  out: JSON.stringify(out),
  concurrent,
});

describe("run log grouping", () => {
  test("initial payload, sequential results, and the undelivered message as `next` with its errors", () => {
    position = 0;
    const entries = [entry("m0", "hello"), entry("m1", result(1, "step-1", { n: 1 })), entry("m2", result(2, "step-2", "two"))];
    const error = { error: "the destination answered 500", body: "boom", headers: {}, status: 500, time: 150 };
    const statuses: Record<string, DeliveryStatus> = { m2: { state: "RETRY", errors: [error] } };
    const log = runLog(run, entries, (id) => statuses[id] ?? delivered);
    expect(log.workflowState).toBe("RUN_STARTED");
    expect(log.label).toBe("red");
    expect(log.labels).toEqual(["red", "blue"]);
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
      { type: "sequential", steps: [expect.objectContaining({ stepId: 1, stepName: "step-1", out: { n: 1 }, state: "STEP_SUCCESS" })] },
      { type: "sequential", steps: [expect.objectContaining({ stepId: 2, stepName: "step-2", out: "two" })] },
      { type: "next", steps: [{ messageId: "m2", state: "STEP_RETRY", retries: 2, retryDelay: "1000", errors: [error] }] },
    ]);
  });

  test("parallel branches group together between their plan steps; a duplicate result counts once", () => {
    position = 0;
    const plan = (target: number, name: string) => ({ stepId: 0, stepName: name, stepType: "Run", concurrent: 2, targetStep: target });
    const entries = [
      entry("m0", "payload"),
      entry("p1", plan(1, "a")),
      entry("p2", plan(2, "b")),
      entry("r2", result(2, "b", "B", 2)),
      entry("r1", result(1, "a", "A", 2)),
      entry("r1-again", result(1, "a", "A", 2)),
      entry("s3", result(3, "after", "done")),
    ];
    const statuses: Record<string, DeliveryStatus> = { s3: { state: "PENDING", errors: [] }, p2: { state: "CANCELED", errors: [] } };
    const log = runLog(run, entries, (id) => statuses[id] ?? delivered);
    const shape = log.steps.map((g) => ({ type: g.type, steps: g.steps.map((s) => s.stepName ?? s.messageId) }));
    expect(shape).toEqual([
      { type: "sequential", steps: ["init"] },
      { type: "parallel", steps: ["b", "a"] },
      { type: "sequential", steps: ["after"] },
      // A plan step not yet delivered names the branch it will run.
      { type: "next", steps: ["b", "s3"] },
    ]);
    expect(log.steps[3]!.steps.map((s) => s.state)).toEqual(["STEP_CANCELED", "STEP_PROGRESS"]);
  });

  test("a call step shows the request it made and the answer it got; the ending fields appear once ended", () => {
    position = 0;
    const callOut = { status: 201, body: "created", header: { "X-Answer": ["yes"] } };
    const entries = [
      entry("m0", ""),
      entry("c1", '{"q":1}', { callType: "toCallback", url: "http://third.test/api", method: "PUT", headers: [["X-Key", "k"]] }),
      entry("cb", "{}", { callType: "fromCallback" }),
      entry("r1", { stepId: 1, stepName: "call", stepType: "Call", out: JSON.stringify(callOut), concurrent: 1 }),
    ];
    const ended: RunRecord = { ...run, state: "RUN_SUCCESS", completedAt: 900, result: '"ok"', labels: undefined };
    const log = runLog(ended, entries, () => delivered);
    expect(log.steps).toHaveLength(2);
    expect(log.steps[1]!.steps[0]).toMatchObject({
      stepType: "Call",
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
