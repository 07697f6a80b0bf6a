/**
 * Reruns from a chosen step (`POST /v2/workflows/runs/{id}/rerun`) with the official workflow SDK:
 * the new run's endpoint finds the steps before the chosen one completed (their side effects do
 * not happen again: counted here), runs the chosen step and the rest, and the source run stays
 * as it was. On the manual clock, so that a kept sleep is seen not to be slept again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rerunKit } from "../helpers/rerun.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;
let kit: ReturnType<typeof rerunKit>;

beforeAll(async () => {
  w = await startWorkflowWorld({ config: { clock: "manual" } });
  kit = rerunKit(w);
});
afterAll(async () => {
  await w?.stop();
});

describe("rerun a workflow run from a step", () => {
  test("sequential steps: the steps before the chosen one (a sleep among them) are kept, the rest run again; the source run is untouched", async () => {
    const ran: string[] = [];
    const { url, calls } = kit.serveCounted<{ n: number }>("/wf/rerun-seq", async (context) => {
      const a = await context.run("a", () => (ran.push("a"), context.requestPayload.n + 1));
      await context.sleep("nap", 3600);
      const b = await context.run("b", () => (ran.push("b"), a * 10));
      const c = await context.run("c", () => (ran.push("c"), b + 1));
      return await context.run("d", () => (ran.push("d"), { total: c }));
    });
    const { workflowRunId } = await w.client.trigger({ url, body: { n: 1 } });
    await w.flush();
    await w.advance(3600_000);
    const source = await kit.log(workflowRunId);
    expect(source).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: '{"total":21}' });
    expect(ran).toEqual(["a", "b", "c", "d"]);
    const sourceCalls = calls(workflowRunId);

    const rerunId = await kit.rerunOk(workflowRunId, { fromStep: "c" });
    expect(rerunId).not.toBe(workflowRunId);
    // No clock advance: the kept sleep is not slept again.
    await w.flush();
    expect(ran).toEqual(["a", "b", "c", "d", "c", "d"]);
    const rerun = await kit.log(rerunId);
    expect(rerun).toMatchObject({
      workflowState: "RUN_SUCCESS",
      workflowRunResponse: '{"total":21}',
      rerunOf: { workflowRunId, workflowRunCreatedAt: source.workflowRunCreatedAt, stepName: "c", stepId: 4 },
    });
    expect(kit.stepNames(rerun)).toEqual(["init", "a", "nap", "b", "c", "d"]);
    // Its endpoint was called for c, for d, and for the end: the kept steps are replayed from the list.
    expect(calls(rerunId)).toBe(3);
    expect(calls(workflowRunId)).toBe(sourceCalls);
    expect(await kit.log(workflowRunId)).toEqual(source);

    // From its first step (or "init") only the payload is kept; a step id names a step too.
    const fromFirst = await kit.rerunOk(workflowRunId, { fromStep: 1 });
    await w.flush();
    expect(ran.slice(6)).toEqual(["a"]);
    await w.advance(3600_000);
    expect(ran.slice(6)).toEqual(["a", "b", "c", "d"]);
    expect(await kit.log(fromFirst)).toMatchObject({ workflowState: "RUN_SUCCESS", rerunOf: { stepName: "a", stepId: 1 } });
  });

  test("parallel steps: a group before the chosen step is kept whole; from a branch, the whole group runs again", async () => {
    const ran: string[] = [];
    const { url, calls } = kit.serveCounted("/wf/rerun-parallel", async (context) => {
      const base = await context.run("base", () => (ran.push("base"), 2));
      const [x, y, z] = await Promise.all(
        ["x", "y", "z"].map((name, i) => context.run(name, () => (ran.push(name), base * (i + 1)))),
      );
      return await context.run("sum", () => (ran.push("sum"), x! + y! + z!));
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect((await kit.log(workflowRunId)).workflowRunResponse).toBe("12");
    ran.length = 0;

    const afterGroup = await kit.rerunOk(workflowRunId, { fromStep: "sum" });
    await w.flush();
    expect(ran).toEqual(["sum"]);
    const log = await kit.log(afterGroup);
    expect(log).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: "12" });
    expect(kit.stepNames(log)).toEqual(["init", "base", "x+y+z", "sum"]);
    expect(calls(afterGroup)).toBe(2);

    ran.length = 0;
    const fromBranch = await kit.rerunOk(workflowRunId, { fromStep: "y" });
    await w.flush();
    expect([...ran].sort()).toEqual(["sum", "x", "y", "z"]);
    const branchLog = await kit.log(fromBranch);
    expect(branchLog).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: "12", rerunOf: { stepName: "y" } });
    expect(kit.stepNames(branchLog)).toEqual(["init", "base", "x+y+z", "sum"]);
  });

  test("a context.call and a waitForEvent before the chosen step are kept: no call is made, no event awaited", async () => {
    let thirdPartyCalls = 0;
    const third = w.route("/third/quote", () => (thirdPartyCalls++, Response.json({ price: 7 })));
    const shipped: unknown[] = [];
    const { url, calls } = kit.serveCounted<{ order: string }>("/wf/rerun-call-wait", async (context) => {
      const quote = await context.call<{ price: number }>("quote", { url: third, method: "GET" });
      const { eventData } = await context.waitForEvent("approval", `approve-${context.requestPayload.order}`, { timeout: "1h" });
      return await context.run("ship", () => {
        shipped.push({ price: quote.body.price, approval: eventData });
        return `shipped at ${quote.body.price}`;
      });
    });
    const { workflowRunId } = await w.client.trigger({ url, body: { order: "o1" } });
    await w.flush();
    await w.client.notify({ eventId: "approve-o1", eventData: { by: "ada" } });
    await w.flush();
    expect(shipped).toEqual([{ price: 7, approval: { by: "ada" } }]);
    expect(thirdPartyCalls).toBe(1);

    const rerunId = await kit.rerunOk(workflowRunId, { fromStep: "ship" });
    await w.flush();
    expect(thirdPartyCalls).toBe(1);
    expect(await w.client.getWaiters({ eventId: "approve-o1" })).toEqual([]);
    expect(shipped).toEqual([{ price: 7, approval: { by: "ada" } }, { price: 7, approval: { by: "ada" } }]);
    const log = await kit.log(rerunId);
    expect(log.workflowState).toBe("RUN_SUCCESS");
    expect(kit.stepNames(log)).toEqual(["init", "quote", "approval", "ship"]);
    // The kept call shows its request and answer, the kept wait its event.
    const steps = log.steps.flatMap((g) => g.steps);
    expect(steps.find((s) => s.stepName === "quote")).toMatchObject({ callUrl: third, callResponseStatus: 200 });
    expect(steps.find((s) => s.stepName === "approval")).toMatchObject({ waitEventId: "approve-o1", out: '{"by":"ada"}' });
    // Called to run ship, then to end the run.
    expect(calls(rerunId)).toBe(2);

    // From the wait: the run waits again (the call still kept), and goes on with the new event.
    const fromWait = await kit.rerunOk(workflowRunId, { fromStep: "approval" });
    await w.flush();
    expect(await w.client.getWaiters({ eventId: "approve-o1" })).toHaveLength(1);
    expect((await kit.log(fromWait)).workflowState).toBe("RUN_STARTED");
    await w.client.notify({ eventId: "approve-o1", eventData: { by: "grace" } });
    await w.flush();
    expect(thirdPartyCalls).toBe(1);
    expect(shipped.at(-1)).toEqual({ price: 7, approval: { by: "grace" } });
    expect((await kit.log(fromWait)).workflowState).toBe("RUN_SUCCESS");
  });

  test("results given for kept steps are what the rerun's code receives: a step's value, a call's answer, an event", async () => {
    let thirdPartyCalls = 0;
    const third = w.route("/third/rate", () => (thirdPartyCalls++, Response.json({ rate: 1.5 })));
    const seen: unknown[] = [];
    const { url } = kit.serveCounted("/wf/rerun-edit", async (context) => {
      const amount = await context.run("amount", () => 100);
      const rate = await context.call<{ rate: number; note?: string }>("rate", { url: third, method: "GET" });
      const { eventData } = await context.waitForEvent("coupon", "coupon-1", { timeout: "1h" });
      return await context.run("total", () => {
        seen.push({ amount, rate: rate.body.rate, note: rate.body.note, status: rate.status, coupon: eventData });
        return amount * rate.body.rate;
      });
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    await w.client.notify({ eventId: "coupon-1", eventData: "none" });
    await w.flush();
    expect(seen).toEqual([{ amount: 100, rate: 1.5, note: undefined, status: 200, coupon: "none" }]);

    // A call's answer is {status, body, header}; what is left out stays as the call had it (its JSON content type here).
    const results = { amount: 40, rate: { status: 203, body: { rate: 2, note: "prix spécial" } }, coupon: { code: "ünïcode" } };
    const rerunId = await kit.rerunOk(workflowRunId, { fromStep: "total", results });
    await w.flush();
    expect(seen.at(-1)).toEqual({ amount: 40, rate: 2, note: "prix spécial", status: 203, coupon: { code: "ünïcode" } });
    expect(thirdPartyCalls).toBe(1);
    const log = await kit.log(rerunId);
    expect(log).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: "80" });
    const steps = log.steps.flatMap((g) => g.steps);
    expect(steps.find((s) => s.stepName === "amount")!.out).toBe("40");
    // The source run keeps its own results.
    const source = (await kit.log(workflowRunId)).steps.flatMap((g) => g.steps);
    expect(source.find((s) => s.stepName === "amount")!.out).toBe("100");
  });

  test("a failed run is rerun from its failed step once the endpoint's code is fixed; its DLQ entry stays", async () => {
    let fixed = false;
    const charged: number[] = [];
    let loads = 0;
    const { url, calls } = kit.serveCounted<{ amount: number }>("/wf/rerun-fixed", async (context) => {
      const order = await context.run("load", () => (loads++, { amount: context.requestPayload.amount }));
      return await context.run("charge", () => {
        if (!fixed) throw new Error("charge: bad amount format");
        charged.push(order.amount);
        return "charged";
      });
    });
    const { workflowRunId } = await w.client.trigger({ url, body: { amount: 30 }, retries: 0 });
    await w.flush();
    const failed = await kit.log(workflowRunId);
    expect(failed.workflowState).toBe("RUN_FAILED");
    const failedCalls = calls(workflowRunId);

    fixed = true;
    const rerunId = await kit.rerunOk(workflowRunId, { fromStep: "charge" });
    await w.flush();
    expect(charged).toEqual([30]);
    expect(loads).toBe(1);
    expect(await kit.log(rerunId)).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: '"charged"', rerunOf: { workflowRunId, stepName: "charge" } });
    expect(calls(rerunId)).toBe(2);
    expect(calls(workflowRunId)).toBe(failedCalls);
    expect(await kit.log(workflowRunId)).toEqual(failed);
    expect((await w.client.dlq.list({ filter: { workflowRunId } })).messages).toHaveLength(1);
  });
});
