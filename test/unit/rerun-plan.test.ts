import { describe, expect, test } from "bun:test";
import type { RunRecord, StepEntry } from "../../src/workflows/model.ts";
import { textOf } from "../../src/workflows/raw-steps.ts";
import { chooseStart, keptEntries, movedTo } from "../../src/workflows/rerun-plan.ts";
import { runLog } from "../../src/workflows/run-log.ts";

/*
 * What a rerun keeps of a run's list (the SDK-level behaviour is proved with the real SDK in
 * test/contract/workflow-sdk-rerun*.test.ts): the cut at the chosen step, parallel groups whole,
 * a step handed in twice kept once, never a call on its way as the last kept entry.
 */

const run: RunRecord = {
  accountId: "acc",
  runId: "wfr_src",
  url: "http://app.test/wf",
  createdAt: 100,
  state: "RUN_SUCCESS",
  config: { retries: 0, headers: [] },
};
const encode = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));

function list() {
  const entries: StepEntry[] = [];
  const add = (messageId: string, body: unknown, overrides: Partial<StepEntry> = {}) => {
    entries.push({
      accountId: "acc",
      runId: run.runId,
      position: entries.length,
      messageId,
      callType: "step",
      url: run.url,
      method: "POST",
      body: encode(body),
      createdAt: 101 + entries.length,
      headers: [],
      retries: 0,
      state: "DELIVERED",
      ...overrides,
    });
  };
  return { entries, add };
}

const step = (stepId: number, stepName: string, out?: unknown, concurrent = 1) =>
  ({ stepId, stepName, stepType: "Run", out: JSON.stringify(out), concurrent });
const plan = (targetStep: number, stepName: string, concurrent: number) => ({ stepId: 0, stepName, stepType: "Run", concurrent, targetStep });
const ids = (entries: StepEntry[]) => entries.map((e) => e.messageId);
const groupsOf = (entries: StepEntry[]) => runLog(run, entries, { errors: new Map(), waiting: [], invoked: [] }).steps;
const kept = (entries: StepEntry[], fromStep: string | number, results: Record<string, unknown> = {}) =>
  keptEntries(entries, chooseStart(run.runId, groupsOf(entries), entries, fromStep), results);

describe("what a rerun keeps", () => {
  const { entries, add } = list();
  add("m0", "payload");
  add("m1", step(1, "a", 1));
  add("m2", plan(2, "x", 2));
  add("m3", plan(3, "y", 2));
  add("m4", step(3, "y", 30, 2));
  add("m4b", step(3, "y", 30, 2)); // handed in twice: deliveries are at least once
  add("m5", step(2, "x", 20, 2));
  add("m6", step(4, "b", 4));

  test("everything before the chosen step; from a branch, everything before its group", () => {
    expect(ids(kept(entries, "b"))).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
    expect(ids(kept(entries, 4))).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
    expect(ids(kept(entries, "y"))).toEqual(["m0", "m1"]);
    expect(ids(kept(entries, "a"))).toEqual(["m0"]);
    expect(ids(kept(entries, "init"))).toEqual(["m0"]);
    // One past the last step: everything, to go on from the end.
    expect(ids(kept(entries, 5))).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6"]);
  });

  test("results replace kept steps' results; a name that is no kept step's is refused", () => {
    const [, a] = kept(entries, "b", { a: { n: 2 } });
    expect(JSON.parse(textOf(a!.body))).toMatchObject({ stepId: 1, stepName: "a", out: '{"n":2}' });
    expect(() => kept(entries, "b", { b: 1 })).toThrow("results name steps the rerun does not keep: b (it keeps a, y, x)");
    expect(() => kept(entries, "nope")).toThrow('workflow run wfr_src has no step "nope": its steps are init, a (1), x (2), y (3), b (4)');
    expect(() => kept(entries, 6)).toThrow("has no step 6");
  });

  test("the last kept entry is a step's result: a call on its way before the cut is not kept", () => {
    const { entries: calls, add: addCall } = list();
    addCall("c0", "payload");
    addCall("c1", step(1, "a", 1));
    const call = { stepId: 2, stepName: "ask", stepType: "Call", concurrent: 1 };
    addCall("c2", "request", { callType: "toCallback", url: "http://third.test", details: { step: call } });
    addCall("c3", { sourceMessageId: "c2", status: 200 }, { callType: "fromCallback" });
    expect(ids(kept(calls, 3))).toEqual(["c0", "c1"]);
    expect(ids(kept(calls, "ask"))).toEqual(["c0", "c1"]);
  });

  test("a kept webhook names the new run", () => {
    const hook = { webhookUrl: "http://svcd.test/v2/workflows/hooks/u1/wfr_src/evt_1", eventId: "evt_1" };
    const { entries: hooks, add: addHook } = list();
    addHook("h0", "payload");
    addHook("h1", { stepId: 1, stepName: "make-hook", stepType: "CreateWebhook", out: JSON.stringify(hook), concurrent: 1 });
    const moved = movedTo(hooks[1]!, "wfr_src", "wfr_new");
    expect(moved.runId).toBe("wfr_new");
    expect(JSON.parse(JSON.parse(textOf(moved.body)).out)).toEqual({ ...hook, webhookUrl: "http://svcd.test/v2/workflows/hooks/u1/wfr_new/evt_1" });
  });
});
