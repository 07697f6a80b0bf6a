import { describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/engines/sqlite/db.ts";
import { MIGRATIONS } from "../../src/engines/migrations.ts";
import type { WriteTx } from "../../src/store/transactor.ts";
import type { RunRecord, StepEntry } from "../../src/workflows/model.ts";
import { encodeRawSteps } from "../../src/workflows/raw-steps.ts";
import { GroupCommit } from "../../src/engines/sqlite/group-commit.ts";
import { SqliteRunStore } from "../../src/engines/sqlite/workflow-runs.ts";
import { SqliteWaitStore } from "../../src/engines/sqlite/workflow-waits.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function fresh() {
  const db = openDatabase(null);
  migrate(db, MIGRATIONS);
  return { db, commit: new GroupCommit(db), runs: new SqliteRunStore(db), waits: new SqliteWaitStore(db) };
}

/** A test whose body runs in one write of a fresh database's group commit. */
function inWrite(body: (stores: ReturnType<typeof fresh>, tx: WriteTx) => Promise<void>) {
  return () => {
    const stores = fresh();
    return stores.commit.run((tx) => body(stores, tx));
  };
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
  test("a run round-trips with its settings, and saveRun writes every change back", inWrite(async ({ runs }, tx) => {
    await runs.insertRun(tx, run({ labels: ["a", "b"], callerIp: "10.0.0.1", config: { retries: 0, retryDelayExpr: "1000", headers: [], flow: { key: "k", parallelism: 1, periodMs: 1000 } } }));
    const stored = (await runs.getRun(tx, "acc", "wfr_1"))!;
    expect(stored).toMatchObject({ runId: "wfr_1", state: "RUN_STARTED", labels: ["a", "b"], callerIp: "10.0.0.1" });
    expect(stored.config).toEqual({ retries: 0, retryDelayExpr: "1000", headers: [], flow: { key: "k", parallelism: 1, periodMs: 1000 } });
    await runs.saveRun(tx, { ...stored, state: "RUN_SUCCESS", completedAt: 2000, result: '"done"' });
    expect(await runs.getRun(tx, "acc", "wfr_1")).toMatchObject({ state: "RUN_SUCCESS", completedAt: 2000, result: '"done"' });
    // Runs are per account: the same id elsewhere is another run.
    expect(await runs.getRun(tx, "other", "wfr_1")).toBeUndefined();
  }));

  test("steps append in order; a prefix ends at the given position; a message finds its entry", inWrite(async ({ runs }, tx) => {
    await runs.insertRun(tx, run());
    expect(await runs.appendStep(tx, step("wfr_1", "m0", "payload"))).toBe(0);
    expect(await runs.appendStep(tx, step("wfr_1", "m1", '{"stepId":1}'))).toBe(1);
    expect(await runs.appendStep(tx, step("wfr_1", "m2", '{"stepId":2}'))).toBe(2);
    expect((await runs.readSteps("acc", "wfr_1", 1)).map((e) => e.messageId)).toEqual(["m0", "m1"]);
    expect(await runs.stepOfMessage(tx, "acc", "wfr_1", "m2")).toMatchObject({ position: 2, runId: "wfr_1" });
    const body = JSON.parse(new TextDecoder().decode(encodeRawSteps(await runs.readSteps("acc", "wfr_1", 0))));
    expect(body).toEqual([{ messageId: "m0", body: Buffer.from("payload").toString("base64"), callType: "step" }]);
  }));

  test("a message's delivery, its failed attempts and the log-only details of an entry are kept with its run", inWrite(async ({ runs }, tx) => {
    await runs.insertRun(tx, run());
    await runs.appendStep(tx, step("wfr_1", "m0", "payload"));
    await runs.appendStep(tx, step("wfr_1", "m1", "call", { callType: "toCallback", details: { step: { stepId: 1, stepName: "ask", stepType: "Call", concurrent: 1 } } }));
    expect((await runs.steps(tx, "acc", "wfr_1")).map((e) => e.state)).toEqual(["PENDING", "PENDING"]);
    await runs.setDelivery(tx, "acc", "wfr_1", "m0", "DELIVERED");
    await runs.setDelivery(tx, "acc", "wfr_1", "m1", "RETRY", 5000);
    await runs.setDetails(tx, "acc", "wfr_1", "m0", { waitTimeoutDeadline: 9 });
    // Another run's entry of the same message id (a resumed run's copy) is not touched.
    await runs.insertRun(tx, run({ runId: "wfr_2" }));
    await runs.appendStep(tx, step("wfr_2", "m1", "call", { state: "DELIVERED" }));
    expect(await runs.steps(tx, "acc", "wfr_1")).toMatchObject([
      { messageId: "m0", state: "DELIVERED", details: { waitTimeoutDeadline: 9 } },
      { messageId: "m1", state: "RETRY", nextDeliveryAt: 5000, details: { step: { stepName: "ask" } } },
    ]);
    expect((await runs.steps(tx, "acc", "wfr_2"))[0]!.state).toBe("DELIVERED");
    const error = { error: "the destination answered 503", body: "down", headers: { "Retry-After": ["1"] }, status: 503, time: 10 };
    await runs.addError(tx, "acc", "wfr_1", "m1", error);
    await runs.addError(tx, "acc", "wfr_1", "m1", { ...error, time: 20 });
    expect((await runs.errors("acc", "wfr_1")).get("m1")!.map((e) => e.time)).toEqual([10, 20]);
    expect((await runs.errors("acc", "wfr_1")).get("m1")![0]).toEqual(error);
    await runs.deleteRun(tx, "acc", "wfr_1");
    expect((await runs.errors("acc", "wfr_1")).size).toBe(0);
  }));

  test("a run finds the runs it invoked", inWrite(async ({ runs }, tx) => {
    const invoker = { workflowRunId: "parent", workflowUrl: "http://app.test/parent", workflowRunCreatedAt: 1, headers: {}, step: { stepId: 2 } };
    await runs.insertRun(tx, run({ runId: "parent" }));
    await runs.insertRun(tx, run({ runId: "child-1", invoker }));
    await runs.insertRun(tx, run({ runId: "child-2", invoker }));
    await runs.insertRun(tx, run({ runId: "stranger" }));
    expect((await runs.invokedBy("acc", "parent")).map((r) => r.runId)).toEqual(["child-1", "child-2"]);
    expect(await runs.invokedBy("other", "parent")).toEqual([]);
  }));

  test("listing filters by state, exact or prefix URLs, host, path, any of several labels, caller IPs, keys, dates, messages; newest first with a cursor", inWrite(async ({ runs }, tx) => {
    await runs.insertRun(tx, run({ runId: "r1", url: "http://a.test/x", labels: ["red", "blue"], createdAt: 1, callerIp: "10.0.0.1" }));
    await runs.insertRun(tx, run({ runId: "r2", url: "http://a.test/x/y", labels: ["green"], createdAt: 2, state: "RUN_SUCCESS", callerIp: "10.0.0.2" }));
    await runs.insertRun(tx, run({ runId: "r3", url: "http://b.test/%_", labels: ["blue_x"], createdAt: 3, config: { retries: 3, headers: [], flow: { key: "k3", periodMs: 1000 } } }));
    await runs.appendStep(tx, step("r2", "m-of-r2", "payload"));
    const ids = async (f: Parameters<SqliteRunStore["listRuns"]>[1], cursor: number | null = null, limit = 10) =>
      (await runs.listRuns("acc", f, cursor, limit)).map((r) => r.runId);
    expect(await ids({})).toEqual(["r3", "r2", "r1"]);
    expect(await ids({ states: ["RUN_STARTED"] })).toEqual(["r3", "r1"]);
    expect(await ids({ urls: ["http://a.test/x"] })).toEqual(["r1"]);
    expect(await ids({ urls: ["http://a.test/x", "http://b.test/%_"] })).toEqual(["r3", "r1"]);
    expect(await ids({ urls: ["http://a.test/x"], urlPrefix: true })).toEqual(["r2", "r1"]);
    // LIKE wildcards in the prefix are literal characters.
    expect(await ids({ urls: ["http://b.test/%"], urlPrefix: true })).toEqual(["r3"]);
    expect(await ids({ urls: ["http://a.test/%"], urlPrefix: true })).toEqual([]);
    expect(await ids({ hosts: ["b.test"] })).toEqual(["r3"]);
    expect(await ids({ paths: ["/x/y", "/x"] })).toEqual(["r2", "r1"]);
    expect(await ids({ labels: ["blue"] })).toEqual(["r1"]);
    expect(await ids({ labels: ["green", "red"] })).toEqual(["r2", "r1"]);
    expect(await ids({ callerIps: ["10.0.0.2", "10.0.0.9"] })).toEqual(["r2"]);
    expect(await ids({ flowControlKeys: ["k3"] })).toEqual(["r3"]);
    expect(await ids({ fromDate: 2, toDate: 3 })).toEqual(["r3", "r2"]);
    expect(await ids({ workflowCreatedAts: [1, 3] })).toEqual(["r3", "r1"]);
    expect(await ids({ workflowRunIds: ["r1", "r3", "nope"] })).toEqual(["r3", "r1"]);
    expect(await ids({ messageIds: ["m-of-r2"] })).toEqual(["r2"]);
    const [first] = await runs.listRuns("acc", {}, null, 1);
    expect(await ids({}, first!.seq!, 10)).toEqual(["r2", "r1"]);
  }));

  test("pruning drops runs that ended before the limit, with their steps; running ones stay", inWrite(async ({ runs }, tx) => {
    await runs.insertRun(tx, run({ runId: "old", state: "RUN_SUCCESS", completedAt: 100 }));
    await runs.insertRun(tx, run({ runId: "recent", state: "RUN_FAILED", completedAt: 900 }));
    await runs.insertRun(tx, run({ runId: "running", createdAt: 1 }));
    await runs.appendStep(tx, step("old", "o0", "x"));
    expect(await runs.prune("acc", 500)).toBe(1);
    expect(await runs.getRun(tx, "acc", "old")).toBeUndefined();
    expect(await runs.steps(tx, "acc", "old")).toEqual([]);
    expect(await runs.getRun(tx, "acc", "recent")).toBeDefined();
    expect(await runs.getRun(tx, "acc", "running")).toBeDefined();
  }));
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

  test("waiters are found by event (all runs or one), by run, and by deadline; a delete happens once", inWrite(async ({ waits }, tx) => {
    await waits.insert(tx, waiter("r1", "evt", 500));
    await waits.insert(tx, waiter("r2", "evt", 300));
    const a = (await waits.waiting(tx, "acc", "evt", "r1"))[0]!.id;
    await waits.insert(tx, waiter("r2", "other", 900));
    expect((await waits.waiting(tx, "acc", "evt")).map((w) => w.runId)).toEqual(["r1", "r2"]);
    expect((await waits.waiting(tx, "acc", "evt", "r2")).map((w) => w.runId)).toEqual(["r2"]);
    expect((await waits.ofRun("acc", "r2")).map((w) => w.eventId).sort()).toEqual(["evt", "other"]);
    expect(await waits.nextDeadline()).toBe(300);
    expect((await waits.due(tx, 500, 10)).map((w) => w.runId)).toEqual(["r2", "r1"]);
    expect(await waits.delete(tx, a)).toBe(true);
    expect(await waits.delete(tx, a)).toBe(false);
    expect((await waits.waiting(tx, "acc", "evt"))[0]!.step).toEqual({ stepId: 1, stepName: "wait", stepType: "Wait", concurrent: 1 });
  }));

  test("kept events are taken once, oldest first, per run and event", inWrite(async ({ waits }, tx) => {
    await waits.keep(tx, "acc", "r1", "evt", bytes("first"), 1);
    await waits.keep(tx, "acc", "r1", "evt", bytes("second"), 2);
    expect(await waits.takeKept(tx, "acc", "r2", "evt")).toBeUndefined();
    expect(new TextDecoder().decode((await waits.takeKept(tx, "acc", "r1", "evt"))!)).toBe("first");
    expect(new TextDecoder().decode((await waits.takeKept(tx, "acc", "r1", "evt"))!)).toBe("second");
    expect(await waits.takeKept(tx, "acc", "r1", "evt")).toBeUndefined();
  }));
});
