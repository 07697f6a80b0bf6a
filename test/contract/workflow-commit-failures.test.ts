/**
 * Workflow runs while transactions of the group commit fail at random (a trigger fails one log
 * entry in 60): the SDK's requests that fail are answered 503, its step then fails and is
 * delivered again, and every run still ends (each step's function may run more than once: at
 * least once, as after any failed delivery); nothing is left half done.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, serveMany } from "@upstash/workflow/nextjs";
import type { WorkflowContext } from "@upstash/workflow";
import { failSomeCommits } from "../helpers/commit-failures.ts";
import { expectIdleAndConsistent } from "../helpers/inspect.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld({ config: { retryDelayScale: 0.001 } });
});
afterAll(async () => {
  await w?.stop();
});

/**
 * Triggers a run with 10 retries per step (a step's delivery fails each time the SDK's request is
 * refused); a trigger refused (503) is sent again, as a caller would. Returns the run's id.
 */
async function trigger(url: string, body: unknown): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      return (await w.client.trigger({ url, body, retries: 10 })).workflowRunId;
    } catch {
      await Bun.sleep(5);
    }
  }
  throw new Error(`a run of ${url} could not be triggered`);
}

test("runs with sequential and parallel steps all end, with their result, while commits fail", async () => {
  const ran = new Map<string, number>();
  const count = (key: string) => ran.set(key, (ran.get(key) ?? 0) + 1);
  const url = w.serve<{ n: number }>(
    "/wf/chaos",
    async (context) => {
      const n = context.requestPayload.n;
      const doubled = await context.run("double", () => (count(`${context.workflowRunId}/double`), n * 2));
      const [a, b] = await Promise.all([
        context.run("left", () => (count(`${context.workflowRunId}/left`), doubled + 1)),
        context.run("right", () => (count(`${context.workflowRunId}/right`), doubled + 2)),
      ]);
      return await context.run("sum", () => (count(`${context.workflowRunId}/sum`), a + b));
    },
  );
  const stopFailing = await failSomeCommits(w.svc, 60);
  const runs: Array<{ id: string; n: number }> = [];
  try {
    await Promise.all(Array.from({ length: 24 }, async (_, n) => runs.push({ id: await trigger(url, { n }), n })));
    // Commits go on failing until the runs are half way (or for a while: failures slow them down).
    await waitUntil(() => ran.size >= runs.length * 2, { timeoutMs: 10_000, what: "steps of the runs" }).catch(() => {});
  } finally {
    await stopFailing();
  }
  for (const { id, n } of runs) {
    const run = await waitUntil(
      async () => {
        const r = await w.run(id);
        return r && r.workflowState !== "RUN_STARTED" ? r : undefined;
      },
      { timeoutMs: 60_000, what: `run ${id} to end` },
    );
    expect(run.workflowState).toBe("RUN_SUCCESS");
    expect(run.workflowRunResponse).toBe(String(4 * n + 3));
    for (const step of ["double", "left", "right", "sum"]) expect(ran.get(`${id}/${step}`)).toBeGreaterThanOrEqual(1);
  }
  await expectIdleAndConsistent(w.svc);
}, 150_000);

test("runs that invoke other runs get their results back while commits fail", async () => {
  const recorded = new Set<number>();
  const child = createWorkflow(async (context: WorkflowContext<{ x: number }>) => {
    const doubled = await context.run("double", () => context.requestPayload.x * 2);
    return { doubled };
  });
  const parent = createWorkflow(async (context: WorkflowContext<{ x: number }>) => {
    const { x } = context.requestPayload;
    const { body } = await context.invoke("call-child", { workflow: child, body: { x }, retries: 10 });
    return await context.run("record", () => (recorded.add(x), (body as { doubled: number }).doubled + 1));
  });
  const { POST } = serveMany({ parent, child }, { qstashClient: w.qstash, receiver: w.receiver });
  w.route("/wf/chaos-many/parent", POST);
  w.route("/wf/chaos-many/child", POST);
  const stopFailing = await failSomeCommits(w.svc, 60);
  const runs: Array<{ id: string; x: number }> = [];
  try {
    const parentUrl = `${w.base}/wf/chaos-many/parent`;
    await Promise.all(Array.from({ length: 16 }, async (_, x) => runs.push({ id: await trigger(parentUrl, { x }), x })));
    // Commits go on failing until every parent recorded its child's answer (or for a while:
    // failures slow them down), so that children end, and answer their parents, while commits fail.
    const allRecorded = () => recorded.size >= runs.length;
    await waitUntil(allRecorded, { timeoutMs: 10_000, what: "the parents' answers" }).catch(() => {});
  } finally {
    await stopFailing();
  }
  for (const { id, x } of runs) {
    const run = await waitUntil(
      async () => {
        const r = await w.run(id);
        return r && r.workflowState !== "RUN_STARTED" ? r : undefined;
      },
      { timeoutMs: 60_000, what: `run ${id} to end` },
    );
    expect(run.workflowState).toBe("RUN_SUCCESS");
    expect(run.workflowRunResponse).toBe(String(2 * x + 1));
  }
  await expectIdleAndConsistent(w.svc);
}, 150_000);
