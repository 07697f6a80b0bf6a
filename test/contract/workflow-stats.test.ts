/** The messaging statistics' workflow series count real runs: started, completed, failed, cancelled. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_ACCOUNT } from "../../src/config/config.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld();
});
afterAll(async () => {
  await w?.stop();
});

interface Point {
  y: number;
}
interface Stats {
  daily_requests: Array<Point & { workflow_message: number; workflow_run: number }>;
  daily_used_workflow: Point[];
  daily_workflow_messages: Array<{ id: string; data_points: Point[] }>;
}

const sum = (points: Point[]) => points.reduce((a, p) => a + p.y, 0);

test("after N runs the workflow series count them: started, completed, failed, cancelled, and their messages", async () => {
  const url = w.serve<{ fail?: boolean; wait?: boolean }>("/wf/stats", async (context) => {
    await context.run("one", () => 1);
    if (context.requestPayload.wait) await context.waitForEvent("hold", "stats-hold", { timeout: "1h" });
    await context.run("two", () => {
      if (context.requestPayload.fail) throw new Error("fails");
      return 2;
    });
  });
  for (let i = 0; i < 3; i++) await w.client.trigger({ url, body: {} });
  await w.client.trigger({ url, body: { fail: true }, retries: 0 });
  const waiting = await w.client.trigger({ url, body: { wait: true } });
  await w.flush();
  await w.client.cancel(waiting.workflowRunId);

  const res = await w.svc.mgmt(`/v2/qstash/stats/${DEFAULT_ACCOUNT.userId}?period=1h`);
  expect(res.status).toBe(200);
  const st = (await res.json()) as Stats;
  const series = Object.fromEntries(st.daily_workflow_messages.map((s) => [s.id, sum(s.data_points)]));
  expect(series).toEqual({ run_started: 5, run_completed: 3, run_failed: 1, run_canceled: 1 });
  const today = st.daily_requests.reduce((a, p) => ({ runs: a.runs + p.workflow_run, messages: a.messages + p.workflow_message }), { runs: 0, messages: 0 });
  expect(today.runs).toBe(5);
  // Each run's trigger and step results: 3 × (trigger + one + two), the failing run's trigger and
  // "one", the waiting run's trigger and "one".
  expect(today.messages).toBe(3 * 3 + 2 + 2);
  expect(sum(st.daily_used_workflow)).toBe(today.messages);
});
