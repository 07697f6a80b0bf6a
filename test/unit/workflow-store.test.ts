import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/engines/sqlite/db.ts";
import { MIGRATIONS } from "../../src/engines/migrations.ts";
import type { RunRecord, StepEntry } from "../../src/workflows/model.ts";
import { encodeRawSteps } from "../../src/workflows/raw-steps.ts";
import { SqliteRunStore } from "../../src/engines/sqlite/workflow-runs.ts";
import { SqliteWaitStore } from "../../src/engines/sqlite/workflow-waits.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function fresh() {
  const db = openDatabase(null);
  migrate(db, MIGRATIONS);
  return { db, runs: new SqliteRunStore(db), waits: new SqliteWaitStore(db) };
}

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    accountId: "acc",
    runId: "wfr_1",
    url: "http://app.test/api/workflow",
    createdAt: 1000,
    state: "RUN_STARTED",
    config: { retries: 3, headers: [["X-Tenant", "acme"]] },
    ...overrides,
  };
}

function step(runId: string, messageId: string, body: string, overrides: Partial<StepEntry> = {}): Omit<StepEntry, "position" | "state"> {
  return {
    accountId: "acc",
    runId,
    messageId,
    callType: "step",
    url: "http://app.test/api/workflow",
    method: "POST",
    body: bytes(body),
    createdAt: 1000,
    headers: [["Content-Type", "application/json"]],
    retries: 3,
    ...overrides,
  };
}

describe("workflow run store", () => {
  test("a run round-trips with its settings, and saveRun writes every change back", () => {
    const { runs } = fresh();
    runs.insertRun(run({ labels: ["a", "b"], callerIp: "10.0.0.1", config: { retries: 0, retryDelayExpr: "1000", headers: [], flow: { key: "k", parallelism: 1, periodMs: 1000 } } }));
    const stored = runs.getRun("acc", "wfr_1")!;
    expect(stored).toMatchObject({ runId: "wfr_1", state: "RUN_STARTED", labels: ["a", "b"], callerIp: "10.0.0.1" });
    expect(stored.config).toEqual({ retries: 0, retryDelayExpr: "1000", headers: [], flow: { key: "k", parallelism: 1, periodMs: 1000 } });
    runs.saveRun({ ...stored, state: "RUN_SUCCESS", completedAt: 2000, result: '"done"' });
    expect(runs.getRun("acc", "wfr_1")).toMatchObject({ state: "RUN_SUCCESS", completedAt: 2000, result: '"done"' });
    // Runs are per account: the same id elsewhere is another run.
    expect(runs.getRun("other", "wfr_1")).toBeUndefined();
  });

  test("steps append in order; a prefix ends at the given position; a message finds its entry", () => {
    const { runs } = fresh();
    runs.insertRun(run());
    expect(runs.appendStep(step("wfr_1", "m0", "payload"))).toBe(0);
    expect(runs.appendStep(step("wfr_1", "m1", '{"stepId":1}'))).toBe(1);
    expect(runs.appendStep(step("wfr_1", "m2", '{"stepId":2}'))).toBe(2);
    expect(runs.readSteps("acc", "wfr_1", 1).map((e) => e.messageId)).toEqual(["m0", "m1"]);
    expect(runs.stepOfMessage("acc", "wfr_1", "m2")).toMatchObject({ position: 2, runId: "wfr_1" });
    const body = JSON.parse(new TextDecoder().decode(encodeRawSteps(runs.readSteps("acc", "wfr_1", 0))));
    expect(body).toEqual([{ messageId: "m0", body: Buffer.from("payload").toString("base64"), callType: "step" }]);
  });

  test("a message's delivery, its failed attempts and the log-only details of an entry are kept with its run", () => {
    const { runs } = fresh();
    runs.insertRun(run());
    runs.appendStep(step("wfr_1", "m0", "payload"));
    runs.appendStep(step("wfr_1", "m1", "call", { callType: "toCallback", details: { step: { stepId: 1, stepName: "ask", stepType: "Call", concurrent: 1 } } }));
    expect(runs.steps("acc", "wfr_1").map((e) => e.state)).toEqual(["PENDING", "PENDING"]);
    runs.setDelivery("acc", "wfr_1", "m0", "DELIVERED");
    runs.setDelivery("acc", "wfr_1", "m1", "RETRY", 5000);
    runs.setDetails("acc", "wfr_1", "m0", { waitTimeoutDeadline: 9 });
    // Another run's entry of the same message id (a resumed run's copy) is not touched.
    runs.insertRun(run({ runId: "wfr_2" }));
    runs.appendStep(step("wfr_2", "m1", "call", { state: "DELIVERED" }));
    expect(runs.steps("acc", "wfr_1")).toMatchObject([
      { messageId: "m0", state: "DELIVERED", details: { waitTimeoutDeadline: 9 } },
      { messageId: "m1", state: "RETRY", nextDeliveryAt: 5000, details: { step: { stepName: "ask" } } },
    ]);
    expect(runs.steps("acc", "wfr_2")[0]!.state).toBe("DELIVERED");
    const error = { error: "the destination answered 503", body: "down", headers: { "Retry-After": ["1"] }, status: 503, time: 10 };
    runs.addError("acc", "wfr_1", "m1", error);
    runs.addError("acc", "wfr_1", "m1", { ...error, time: 20 });
    expect(runs.errors("acc", "wfr_1").get("m1")!.map((e) => e.time)).toEqual([10, 20]);
    expect(runs.errors("acc", "wfr_1").get("m1")![0]).toEqual(error);
    runs.deleteRun("acc", "wfr_1");
    expect(runs.errors("acc", "wfr_1").size).toBe(0);
  });

  test("a run finds the runs it invoked", () => {
    const { runs } = fresh();
    const invoker = { workflowRunId: "parent", workflowUrl: "http://app.test/parent", workflowRunCreatedAt: 1, headers: {}, step: { stepId: 2 } };
    runs.insertRun(run({ runId: "parent" }));
    runs.insertRun(run({ runId: "child-1", invoker }));
    runs.insertRun(run({ runId: "child-2", invoker }));
    runs.insertRun(run({ runId: "stranger" }));
    expect(runs.invokedBy("acc", "parent").map((r) => r.runId)).toEqual(["child-1", "child-2"]);
    expect(runs.invokedBy("other", "parent")).toEqual([]);
  });

  test("listing filters by state, exact or prefix URLs, host, path, any of several labels, caller IPs, keys, dates, messages; newest first with a cursor", () => {
    const { runs } = fresh();
    runs.insertRun(run({ runId: "r1", url: "http://a.test/x", labels: ["red", "blue"], createdAt: 1, callerIp: "10.0.0.1" }));
    runs.insertRun(run({ runId: "r2", url: "http://a.test/x/y", labels: ["green"], createdAt: 2, state: "RUN_SUCCESS", callerIp: "10.0.0.2" }));
    runs.insertRun(run({ runId: "r3", url: "http://b.test/%_", labels: ["blue_x"], createdAt: 3, config: { retries: 3, headers: [], flow: { key: "k3", periodMs: 1000 } } }));
    runs.appendStep(step("r2", "m-of-r2", "payload"));
    const ids = (f: Parameters<SqliteRunStore["listRuns"]>[1], cursor: number | null = null, limit = 10) =>
      runs.listRuns("acc", f, cursor, limit).map((r) => r.runId);
    expect(ids({})).toEqual(["r3", "r2", "r1"]);
    expect(ids({ states: ["RUN_STARTED"] })).toEqual(["r3", "r1"]);
    expect(ids({ urls: ["http://a.test/x"] })).toEqual(["r1"]);
    expect(ids({ urls: ["http://a.test/x", "http://b.test/%_"] })).toEqual(["r3", "r1"]);
    expect(ids({ urls: ["http://a.test/x"], urlPrefix: true })).toEqual(["r2", "r1"]);
    // LIKE wildcards in the prefix are literal characters.
    expect(ids({ urls: ["http://b.test/%"], urlPrefix: true })).toEqual(["r3"]);
    expect(ids({ urls: ["http://a.test/%"], urlPrefix: true })).toEqual([]);
    expect(ids({ hosts: ["b.test"] })).toEqual(["r3"]);
    expect(ids({ paths: ["/x/y", "/x"] })).toEqual(["r2", "r1"]);
    expect(ids({ labels: ["blue"] })).toEqual(["r1"]);
    expect(ids({ labels: ["green", "red"] })).toEqual(["r2", "r1"]);
    expect(ids({ callerIps: ["10.0.0.2", "10.0.0.9"] })).toEqual(["r2"]);
    expect(ids({ flowControlKeys: ["k3"] })).toEqual(["r3"]);
    expect(ids({ fromDate: 2, toDate: 3 })).toEqual(["r3", "r2"]);
    expect(ids({ workflowCreatedAts: [1, 3] })).toEqual(["r3", "r1"]);
    expect(ids({ workflowRunIds: ["r1", "r3", "nope"] })).toEqual(["r3", "r1"]);
    expect(ids({ messageIds: ["m-of-r2"] })).toEqual(["r2"]);
    const [first] = runs.listRuns("acc", {}, null, 1);
    expect(ids({}, first!.seq!, 10)).toEqual(["r2", "r1"]);
  });

  test("pruning drops runs that ended before the limit, with their steps; running ones stay", () => {
    const { runs } = fresh();
    runs.insertRun(run({ runId: "old", state: "RUN_SUCCESS", completedAt: 100 }));
    runs.insertRun(run({ runId: "recent", state: "RUN_FAILED", completedAt: 900 }));
    runs.insertRun(run({ runId: "running", createdAt: 1 }));
    runs.appendStep(step("old", "o0", "x"));
    expect(runs.prune("acc", 500)).toBe(1);
    expect(runs.getRun("acc", "old")).toBeUndefined();
    expect(runs.steps("acc", "old")).toEqual([]);
    expect(runs.getRun("acc", "recent")).toBeDefined();
    expect(runs.getRun("acc", "running")).toBeDefined();
  });
});

describe("workflow wait store", () => {
  const waiter = (runId: string, eventId: string, deadline: number) => ({
    accountId: "acc",
    runId,
    eventId,
    url: "http://app.test/wf",
    createdAt: 0,
    deadline,
    headers: [["Upstash-Workflow-RunId", runId]] as Array<[string, string]>,
    timeoutUrl: "http://app.test/wf",
    timeoutHeaders: {},
    timeout: "10s",
    step: { stepId: 1, stepName: "wait", stepType: "Wait", concurrent: 1 },
  });

  test("waiters are found by event (all runs or one), by run, and by deadline; a delete happens once", () => {
    const { waits } = fresh();
    waits.insert(waiter("r1", "evt", 500));
    waits.insert(waiter("r2", "evt", 300));
    const a = waits.waiting("acc", "evt", "r1")[0]!.id;
    waits.insert(waiter("r2", "other", 900));
    expect(waits.waiting("acc", "evt").map((w) => w.runId)).toEqual(["r1", "r2"]);
    expect(waits.waiting("acc", "evt", "r2").map((w) => w.runId)).toEqual(["r2"]);
    expect(waits.ofRun("acc", "r2").map((w) => w.eventId).sort()).toEqual(["evt", "other"]);
    expect(waits.nextDeadline()).toBe(300);
    expect(waits.due(500, 10).map((w) => w.runId)).toEqual(["r2", "r1"]);
    expect(waits.delete(a)).toBe(true);
    expect(waits.delete(a)).toBe(false);
    expect(waits.waiting("acc", "evt")[0]!.step).toEqual({ stepId: 1, stepName: "wait", stepType: "Wait", concurrent: 1 });
  });

  test("kept events are taken once, oldest first, per run and event", () => {
    const { waits } = fresh();
    waits.keep("acc", "r1", "evt", bytes("first"), 1);
    waits.keep("acc", "r1", "evt", bytes("second"), 2);
    expect(waits.takeKept("acc", "r2", "evt")).toBeUndefined();
    expect(new TextDecoder().decode(waits.takeKept("acc", "r1", "evt")!)).toBe("first");
    expect(new TextDecoder().decode(waits.takeKept("acc", "r1", "evt")!)).toBe("second");
    expect(waits.takeKept("acc", "r1", "evt")).toBeUndefined();
  });
});
