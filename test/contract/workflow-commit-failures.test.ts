/**
 * Workflow runs while transactions of the group commit fail at random (a trigger fails one log
 * entry in 60): the SDK's requests that fail are answered 503, its step then fails and is
 * delivered again, and every run still ends (each step's function may run more than once: at
 * least once, as after any failed delivery); nothing is left half done.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
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
    await Promise.all(
      Array.from({ length: 24 }, async (_, n) => {
        // A trigger refused (503) is sent again, as a caller would.
        for (let attempt = 0; attempt < 20; attempt++) {
          try {
            runs.push({ id: (await w.client.trigger({ url, body: { n }, retries: 10 })).workflowRunId, n });
            return;
          } catch {
            await Bun.sleep(5);
          }
        }
        throw new Error(`run ${n} could not be triggered`);
      }),
    );
    // Commits go on failing until the runs are half way (or for a while: failures slow them down).
    await waitUntil(() => ran.size >= runs.length * 2, { timeoutMs: 20_000, what: "steps of the runs" }).catch(() => {});
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
