/**
 * Reruns with the official workflow SDK, beyond the plain case: bad requests are refused with a
 * clear 4xx and start nothing; the override headers set the new run's settings; an invoked run
 * and a webhook before the chosen step are kept (the webhook then names the new run); running and
 * cancelled runs are rerun too, and their source is left as it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow, serveMany } from "@upstash/workflow/nextjs";
import type { WorkflowContext } from "@upstash/workflow";
import { hostedToken } from "../../src/accounts/hosted-token.ts";
import { DEFAULT_ACCOUNT } from "../../src/config/config.ts";
import { rerunKit } from "../helpers/rerun.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;
let kit: ReturnType<typeof rerunKit>;

beforeAll(async () => {
  // A token of the hosted shape: createWebhook reads the user id out of it.
  w = await startWorkflowWorld({ token: hostedToken(DEFAULT_ACCOUNT.userId, DEFAULT_ACCOUNT.token), config: { clock: "manual" } });
  kit = rerunKit(w);
});
afterAll(async () => {
  await w?.stop();
});

const runCount = async () => (await w.client.logs({ count: 100 })).runs.length;

describe("reruns: inputs and what they keep", () => {
  test("bad requests answer a clear 4xx and start no run", async () => {
    const { url } = kit.serveCounted("/wf/rerun-bad", async (context) => {
      await context.run("a", () => 1);
      await context.sleep("nap", 1);
      await context.run("b", () => 2);
    });
    const other = kit.serveCounted("/wf/rerun-other", async (context) => {
      await context.run("elsewhere", () => 3);
    });
    const { workflowRunId } = await w.client.trigger({ url });
    const { workflowRunId: otherRunId } = await w.client.trigger({ url: other.url });
    await w.flush();
    await w.advance(1000);
    const before = await runCount();

    const refused = async (runId: string, body: unknown, status: number, error: RegExp, headers: Record<string, string> = {}) => {
      const res = await kit.rerun(runId, body, headers);
      const answer = (await res.json()) as { error?: string };
      expect({ status: res.status, error: answer.error }).toEqual({ status, error: expect.stringMatching(error) });
    };
    await refused("wfr_unknown", { fromStep: "a" }, 404, /workflow run wfr_unknown not found/);
    await refused(workflowRunId, { fromStep: "missing" }, 400, /has no step "missing": its steps are init, a \(1\), nap \(2\), b \(3\)/);
    // A step of another run is no step of this one, by name or by id.
    await refused(workflowRunId, { fromStep: "elsewhere" }, 400, /has no step "elsewhere"/);
    await refused(otherRunId, { fromStep: 3 }, 400, /has no step 3/);
    await refused(workflowRunId, { fromStep: "b", results: { b: 5 } }, 400, /results name steps the rerun does not keep: b \(it keeps a, nap\)/);
    await refused(workflowRunId, { fromStep: "b", results: { nap: 5 } }, 400, /step "nap" \(SleepFor\) is a sleep/);
    await refused(workflowRunId, {}, 400, /^fromStep: is required$/);
    await refused(workflowRunId, { fromStep: 0 }, 400, /^fromStep: must be a non-empty string or an integer of at least 1$/);
    await refused(workflowRunId, { fromStep: "a", extra: true }, 400, /^extra: is not a known field$/);
    await refused(workflowRunId, { fromStep: "a" }, 400, /Upstash-Retries/, { "Upstash-Retries": "many" });
    await refused(workflowRunId, { fromStep: "a" }, 400, new RegExp(`workflow run ${otherRunId} already exists`), { "Upstash-Workflow-RunId": otherRunId });
    const notJson = await w.svc.api(`/v2/workflows/runs/${workflowRunId}/rerun`, { method: "POST", body: "{", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    expect(await runCount()).toBe(before);
  });

  test("the override headers set the new run's settings: its id, label, retries and first delivery's time", async () => {
    const { url, calls } = kit.serveCounted("/wf/rerun-settings", async (context) => {
      await context.run("first", () => "one");
      await context.run("second", () => "two");
    });
    const { workflowRunId } = await w.client.trigger({ url, label: "nightly", retries: 2 });
    await w.flush();
    const headers = { "Upstash-Workflow-RunId": "wfr_my_rerun", "Upstash-Label": "rerun", "Upstash-Retries": "0", "Upstash-Delay": "1h" };
    expect(await kit.rerunOk(workflowRunId, { fromStep: "second" }, headers)).toBe("wfr_my_rerun");
    await w.flush();
    expect(calls("wfr_my_rerun")).toBe(0);
    await w.advance(3600_000);
    expect(calls("wfr_my_rerun")).toBe(2);
    const log = await kit.log("wfr_my_rerun");
    expect(log).toMatchObject({ workflowState: "RUN_SUCCESS", label: "rerun" });
    const second = log.steps.flatMap((g) => g.steps).find((s) => s.stepName === "second")!;
    expect(second.retries).toBe(0);
    expect((await kit.log(workflowRunId)).label).toBe("nightly");
  });

  test("an invoked run and a webhook before the chosen step are kept; the kept webhook names the new run", async () => {
    const ran: string[] = [];
    const hooks: string[] = [];
    const child = createWorkflow(async (context: WorkflowContext<{ x: number }>) => {
      return await context.run("double", () => (ran.push("child"), context.requestPayload.x * 2));
    });
    const parent = createWorkflow(async (context: WorkflowContext) => {
      const { body } = await context.invoke("call-child", { workflow: child, body: { x: 21 } });
      const webhook = await context.createWebhook("make-hook");
      await context.run("share-hook", () => void hooks.push(webhook.webhookUrl));
      const { request } = await context.waitForWebhook("wait-hook", webhook, "1h");
      await context.run("record", async () => void ran.push(`got ${JSON.stringify(body)} and ${await request!.text()}`));
    });
    const { POST } = serveMany({ parent, child }, { qstashClient: w.qstash, receiver: w.receiver });
    w.route("/wf/rerun-many/parent", POST);
    w.route("/wf/rerun-many/child", POST);
    const { workflowRunId } = await w.client.trigger({ url: `${w.base}/wf/rerun-many/parent` });
    await w.flush();
    expect((await fetch(hooks[0]!, { method: "POST", body: "paid" })).status).toBe(200);
    await w.flush();
    expect(ran).toEqual(["child", "got 42 and paid"]);

    const rerunId = await kit.rerunOk(workflowRunId, { fromStep: "share-hook" });
    await w.flush();
    // The child was not invoked again; the webhook handed out now is the new run's.
    expect(ran).toEqual(["child", "got 42 and paid"]);
    expect(new URL(hooks[1]!).pathname).toStartWith(`/v2/workflows/hooks/${DEFAULT_ACCOUNT.userId}/${rerunId}/`);
    expect(new URL(hooks[1]!).pathname.split("/").at(-1)).toBe(new URL(hooks[0]!).pathname.split("/").at(-1));
    expect((await fetch(hooks[1]!, { method: "POST", body: "paid again" })).status).toBe(200);
    await w.flush();
    expect(ran).toEqual(["child", "got 42 and paid", "got 42 and paid again"]);
    const log = await kit.log(rerunId);
    expect(log.workflowState).toBe("RUN_SUCCESS");
    expect(kit.stepNames(log)).toEqual(["init", "call-child", "make-hook", "share-hook", "wait-hook", "record"]);
    expect((await w.client.logs({ workflowUrl: `${w.base}/wf/rerun-many/child` })).runs).toHaveLength(1);
  });

  test("a running run is rerun beside it; a cancelled one from the step it was on", async () => {
    const done: string[] = [];
    const { url } = kit.serveCounted("/wf/rerun-waiting", async (context) => {
      await context.run("prepare", () => "ready");
      const { eventData } = await context.waitForEvent("approval", "rerun-approval", { timeout: "1h" });
      await context.run("finish", () => void done.push(`${context.workflowRunId} ${eventData}`));
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    const beside = await kit.rerunOk(workflowRunId, { fromStep: "approval" });
    await w.flush();
    expect((await w.client.getWaiters({ eventId: "rerun-approval" })).length).toBe(2);
    await w.client.cancel({ ids: [workflowRunId] });
    await w.client.notify({ eventId: "rerun-approval", eventData: "yes" });
    await w.flush();
    expect(done).toEqual([`${beside} yes`]);
    const cancelled = await kit.log(workflowRunId);
    expect(cancelled.workflowState).toBe("RUN_CANCELED");

    // The cancelled run's log no longer shows the wait it was on: its id is the one after the last step shown.
    expect(kit.stepNames(cancelled)).toEqual(["init", "prepare"]);
    const resumed = await kit.rerunOk(workflowRunId, { fromStep: 2 });
    await w.flush();
    await w.client.notify({ eventId: "rerun-approval", eventData: "again" });
    await w.flush();
    expect(done).toEqual([`${beside} yes`, `${resumed} again`]);
    expect(await kit.log(resumed)).toMatchObject({ workflowState: "RUN_SUCCESS", rerunOf: { workflowRunId, stepId: 2 } });
    expect(await kit.log(workflowRunId)).toEqual(cancelled);
  });
});
