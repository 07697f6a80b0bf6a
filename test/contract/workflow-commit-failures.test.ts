/**
 * Workflow runs while transactions of the group commit fail at random (a trigger fails one log
 * entry in 60): the SDK's requests that fail are answered 503, its step then fails and is
 * delivered again, and every run still ends (each step's function may run more than once: at
 * least once, as after any failed delivery); nothing is left half done.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, serveMany } from "@upstash/workflow/nextjs";
import type { WorkflowContext } from "@upstash/workflow";
import { DEFAULT_METRICS_TOKEN } from "../../src/config/config.ts";
import { oneIn, whileCommitsFail } from "../helpers/commit-failures.ts";
import { parseExposition } from "../helpers/prometheus.ts";
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

/** The run's log once it has ended. */
function ended(id: string) {
  const over = async () => {
    const run = await w.run(id);
    return run && run.workflowState !== "RUN_STARTED" ? run : undefined;
  };
  return waitUntil(over, { timeoutMs: 60_000, what: `run ${id} to end` });
}

/** Transactions the storage refused since the start (the server's own metric). */
async function refusedWrites(): Promise<number> {
  const res = await fetch(`${w.svc.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
  return parseExposition(await res.text()).value("svcd_storage_writes_refused_total");
}

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
  const runs: Array<{ id: string; n: number }> = [];
  await whileCommitsFail(w.svc, oneIn(60), async () => {
    await Promise.all(Array.from({ length: 24 }, async (_, n) => runs.push({ id: await trigger(url, { n }), n })));
    // Commits go on failing until the runs are half way (or for a while: failures slow them down).
    await waitUntil(() => ran.size >= runs.length * 2, { timeoutMs: 10_000, what: "steps of the runs" }).catch(() => {});
  });
  for (const { id, n } of runs) {
    const run = await ended(id);
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
  const runs: Array<{ id: string; x: number }> = [];
  await whileCommitsFail(w.svc, oneIn(60), async () => {
    const parentUrl = `${w.base}/wf/chaos-many/parent`;
    await Promise.all(Array.from({ length: 16 }, async (_, x) => runs.push({ id: await trigger(parentUrl, { x }), x })));
    // Commits go on failing until every parent recorded its child's answer (or for a while:
    // failures slow them down), so that children end, and answer their parents, while commits fail.
    const allRecorded = () => recorded.size >= runs.length;
    await waitUntil(allRecorded, { timeoutMs: 10_000, what: "the parents' answers" }).catch(() => {});
  });
  for (const { id, x } of runs) {
    const run = await ended(id);
    expect(run.workflowState).toBe("RUN_SUCCESS");
    expect(run.workflowRunResponse).toBe(String(2 * x + 1));
  }
  await expectIdleAndConsistent(w.svc);
}, 150_000);

test("a run ended by a delivery whose settling the storage refused still answers the run that invoked it", async () => {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  let childStarted = false;
  const child = createWorkflow(async (context: WorkflowContext) => {
    await context.run("fail", async () => {
      childStarted = true;
      await gate;
      throw new Error("the child fails");
    });
  });
  const parent = createWorkflow(async (context: WorkflowContext) => {
    const { isFailed } = await context.invoke("call-child", { workflow: child, body: {}, retries: 0 });
    return await context.run("record", () => isFailed);
  });
  const { POST } = serveMany({ parent, child }, { qstashClient: w.qstash, receiver: w.receiver });
  w.route("/wf/settle/parent", POST);
  w.route("/wf/settle/child", POST);
  const id = await trigger(`${w.base}/wf/settle/parent`, {});
  await waitUntil(() => childStarted, { what: "the child's step" });
  // The child's failure ends it in the outcome's write; settling it, in a write of its own, stores
  // the parent's answer (a message to the parent): refused while this stands.
  await whileCommitsFail(w.svc, "NEW.state = 'CREATED' AND NEW.url LIKE '%/wf/settle/parent%'", async () => {
    release();
    await waitUntil(async () => (await refusedWrites()) > 0, { what: "the refused settling" });
  });
  const run = await ended(id);
  expect(run.workflowState).toBe("RUN_SUCCESS");
  expect(run.workflowRunResponse).toBe("true");
  await expectIdleAndConsistent(w.svc);
}, 60_000);
